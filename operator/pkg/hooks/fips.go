package hooks

import (
	"fmt"
	"strconv"

	opv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// EnvFIPSEnabled tells the driver to put efs-utils (and so stunnel) in FIPS mode.
const EnvFIPSEnabled = "FIPS_ENABLED"

// setFIPS sets FIPS_ENABLED=true|false on the driver container. enabled was read once at operator start-up.
func setFIPS(spec *corev1.PodSpec, enabled bool) error {
	if !setEnv(spec, DriverContainer, EnvFIPSEnabled, strconv.FormatBool(enabled)) {
		return fmt.Errorf("FIPS hook: no container %q in the pod template", DriverContainer)
	}
	return nil
}

// FIPSDeployment returns the Deployment hook that sets FIPS_ENABLED on the driver container.
func FIPSDeployment(enabled bool) func(*opv1.OperatorSpec, *appsv1.Deployment) error {
	return func(_ *opv1.OperatorSpec, d *appsv1.Deployment) error { return setFIPS(&d.Spec.Template.Spec, enabled) }
}

// FIPSDaemonSet returns the DaemonSet hook that sets FIPS_ENABLED on the driver container.
func FIPSDaemonSet(enabled bool) func(*opv1.OperatorSpec, *appsv1.DaemonSet) error {
	return func(_ *opv1.OperatorSpec, ds *appsv1.DaemonSet) error {
		return setFIPS(&ds.Spec.Template.Spec, enabled)
	}
}
