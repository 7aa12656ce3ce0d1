package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Environment variables the operator reads at start-up. OLM sets the image variables from the CSV; ROLEARN and
// NODE_ROLEARN come from Subscription.spec.config.env.
const (
	EnvDriverImage              = "DRIVER_IMAGE"
	EnvProvisionerImage         = "PROVISIONER_IMAGE"
	EnvNodeDriverRegistrarImage = "NODE_DRIVER_REGISTRAR_IMAGE"
	EnvLivenessProbeImage       = "LIVENESS_PROBE_IMAGE"
	EnvKubeRBACProxyImage       = "KUBE_RBAC_PROXY_IMAGE"
	EnvToolsImage               = "TOOLS_IMAGE"
	EnvRoleARN                  = "ROLEARN"
	EnvNodeRoleARN              = "NODE_ROLEARN"
	EnvOperatorImageVersion     = "OPERATOR_IMAGE_VERSION"
	// EnvWebIdentityTokenFile is the operator pod's own web identity token, injected by the pod identity webhook
	// when the operator's ServiceAccount carries eks.amazonaws.com/role-arn.
	EnvWebIdentityTokenFile = "AWS_WEB_IDENTITY_TOKEN_FILE"
)

// FIPSFile is where the host kernel reports FIPS mode; the operator pod sees the host's value.
const FIPSFile = "/proc/sys/crypto/fips_enabled"

// Images are the operand images, one per container kind.
type Images struct {
	Driver              string
	Provisioner         string
	NodeDriverRegistrar string
	LivenessProbe       string
	KubeRBACProxy       string
	Tools               string
}

// Config is the operator's start-up configuration.
type Config struct {
	// Namespace is where the operator runs and where it installs the driver's namespaced objects.
	Namespace string
	// Images are the operand images.
	Images Images
	// RoleARN is the controller's IAM role for STS (ROLEARN); empty when not set.
	RoleARN string
	// NodeRoleARN is the node pods' IAM role for STS (NODE_ROLEARN), needed for One Zone volumes; empty when not set.
	NodeRoleARN string
	// FIPSEnabled is true when the host kernel runs in FIPS mode.
	FIPSEnabled bool
	// Version is the operator image version (OPERATOR_IMAGE_VERSION), for logs.
	Version string
	// WebIdentityTokenFile is the operator's own web identity token (AWS_WEB_IDENTITY_TOKEN_FILE), with which the
	// access-point tags controller assumes the controller role; empty when not set.
	WebIdentityTokenFile string
}

// FromEnv builds a Config from getenv (os.Getenv in production) and the namespace the operator runs in. FIPS mode
// is not read here; see ReadFIPS.
func FromEnv(getenv func(string) string, namespace string) Config {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	return Config{
		Namespace: namespace,
		Images: Images{
			Driver:              get(EnvDriverImage),
			Provisioner:         get(EnvProvisionerImage),
			NodeDriverRegistrar: get(EnvNodeDriverRegistrarImage),
			LivenessProbe:       get(EnvLivenessProbeImage),
			KubeRBACProxy:       get(EnvKubeRBACProxyImage),
			Tools:               get(EnvToolsImage),
		},
		RoleARN:     get(EnvRoleARN),
		NodeRoleARN: get(EnvNodeRoleARN),
		Version:     get(EnvOperatorImageVersion),

		WebIdentityTokenFile: get(EnvWebIdentityTokenFile),
	}
}

// Validate reports missing settings the operator cannot run without: the namespace and every operand image.
// Malformed role ARNs are not rejected here: they degrade the matching CredentialsRequest controller instead, so
// the admin sees the problem on the ClusterCSIDriver.
func (c Config) Validate() error {
	var errs []error
	if c.Namespace == "" {
		errs = append(errs, errors.New("namespace is empty: run the operator in a pod or pass --namespace"))
	}
	for _, img := range []struct{ env, value string }{
		{EnvDriverImage, c.Images.Driver},
		{EnvProvisionerImage, c.Images.Provisioner},
		{EnvNodeDriverRegistrarImage, c.Images.NodeDriverRegistrar},
		{EnvLivenessProbeImage, c.Images.LivenessProbe},
		{EnvKubeRBACProxyImage, c.Images.KubeRBACProxy},
		{EnvToolsImage, c.Images.Tools},
	} {
		if img.value == "" {
			errs = append(errs, fmt.Errorf("environment variable %s is empty: want an image pull spec, set by the operator's CSV", img.env))
		}
	}
	return errors.Join(errs...)
}

// ReadFIPS reports whether the file at path (FIPSFile) says FIPS mode is on ("1"). A missing file means off, as on
// kernels built without FIPS support. A file that cannot be read or holds anything but 0 or 1 also means off, as in
// OpenShift's operator; warn then says why, for the caller to log, and the operator still starts.
func ReadFIPS(path string) (enabled bool, warn error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading FIPS mode from %s: %w; treating FIPS mode as off", path, err)
	}
	switch v := strings.TrimSpace(string(b)); v {
	case "1":
		return true, nil
	case "0", "":
		return false, nil
	default:
		return false, fmt.Errorf("FIPS mode in %s is %q, want 0 or 1; treating FIPS mode as off", path, v)
	}
}
