package assets

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

//go:embed driver/*.yaml operator/*.yaml crds/*.yaml
var files embed.FS

// Asset names of the driver objects that hooks and controllers refer to.
const (
	ControllerDeployment   = "driver/controller.yaml"
	NodeDaemonSet          = "driver/node.yaml"
	CredentialsRequest     = "driver/credentials.yaml"
	NodeCredentialsRequest = "driver/credentials-node.yaml"
	ServiceMonitor         = "driver/servicemonitor.yaml"
	CSIDriver              = "driver/csidriver.yaml"
	SharedVolumeCRD        = "crds/aws-efs.managed.openshift.io_sharedvolumes.yaml"
)

// Placeholders filled by Render from the operator's configuration. ${LOG_LEVEL}, ${CLUSTER_ID},
// ${TLS_CIPHER_SUITES}, ${TLS_MIN_VERSION} and ${LEADER_ELECTION_*} are left for library-go's manifest hooks,
// which read them from the ClusterCSIDriver and the cluster configuration on every sync.
const (
	Namespace                = "${NAMESPACE}"
	DriverImage              = "${DRIVER_IMAGE}"
	ProvisionerImage         = "${PROVISIONER_IMAGE}"
	NodeDriverRegistrarImage = "${NODE_DRIVER_REGISTRAR_IMAGE}"
	LivenessProbeImage       = "${LIVENESS_PROBE_IMAGE}"
	KubeRBACProxyImage       = "${KUBE_RBAC_PROXY_IMAGE}"
	ToolsImage               = "${TOOLS_IMAGE}"
)

// placeholderRE finds every ${NAME} in a manifest.
var placeholderRE = regexp.MustCompile(`\$\{[A-Z_]+\}`)

// Read returns the raw bytes of one embedded manifest, e.g. "driver/node.yaml".
func Read(name string) ([]byte, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("asset %q: %w", name, err)
	}
	return b, nil
}

// Render returns the manifest with every placeholder in values replaced. Placeholders not in values stay as
// they are, for the hooks that fill them later.
func Render(name string, values map[string]string) ([]byte, error) {
	b, err := Read(name)
	if err != nil {
		return nil, err
	}
	pairs := make([]string, 0, 2*len(values))
	for k, v := range values {
		pairs = append(pairs, k, v)
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(b))), nil
}

// Placeholders lists the distinct placeholders used by one manifest, sorted.
func Placeholders(manifest []byte) []string {
	seen := map[string]bool{}
	for _, m := range placeholderRE.FindAll(manifest, -1) {
		seen[string(m)] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// List returns the names of the manifests in one directory ("driver", "operator" or "crds"), sorted.
func List(dir string) ([]string, error) {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("asset directory %q: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, path.Join(dir, e.Name()))
	}
	return out, nil
}

// DriverStatics lists the driver manifests applied by the static resources controller: everything in driver/
// except the workloads and the CredentialsRequests, which have controllers of their own.
func DriverStatics() ([]string, error) {
	names, err := List("driver")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		switch n {
		case ControllerDeployment, NodeDaemonSet, CredentialsRequest, NodeCredentialsRequest:
			continue
		}
		out = append(out, n)
	}
	return out, nil
}
