package cluster

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// thirdPartyCRDs are the CRDs of other OpenShift components the operator writes objects of (CredentialsRequest,
// ServiceMonitor, PrometheusRule), reduced to what the API server needs to store them.
//
//go:embed third-party-crds.yaml
var thirdPartyCRDs []byte

// openShiftCRDFiles are the openshift/api CRD manifests the operator reads or writes, as OpenShift installs them.
var openShiftCRDFiles = []string{
	"operator/v1/zz_generated.crd-manifests/0000_50_csi-driver_01_clustercsidrivers-Default.crd.yaml",
	"operator/v1/zz_generated.crd-manifests/0000_40_cloud-credential_00_cloudcredentials.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_03_config-operator_01_proxies.crd.yaml",
	"config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_apiservers-Default.crd.yaml",
}

// OpenShiftCRDs are the CRDs of an OpenShift cluster that the operator needs: openshift/api's, from the module
// cache at the version the operator pins, and the third-party ones. Install them with InstallCRDs.
func OpenShiftCRDs(ctx context.Context) ([][]byte, error) {
	dir, err := APIModuleDir(ctx)
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, f := range openShiftCRDFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return append(docs, thirdPartyCRDs), nil
}

// APIModuleDir is the module cache directory of github.com/openshift/api at the version the operator module
// pins (run from inside the operator module); its generated CRD manifests are the ones OpenShift installs.
func APIModuleDir(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api").Output()
	if err != nil {
		return "", fmt.Errorf("locating github.com/openshift/api in the module cache: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("go list -m github.com/openshift/api: module not downloaded")
	}
	return dir, nil
}
