package hooks

import (
	"fmt"

	opv1 "github.com/openshift/api/operator/v1"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
)

// VolumeMetricsArgs returns the driver arguments for the volume metrics configuration m
// (ClusterCSIDriver.spec.driverConfig.aws.efsVolumeMetrics): none when m is nil or Disabled; otherwise
// --vol-metrics-opt-in=true plus the refresh period and file system rate limit when they are set.
func VolumeMetricsArgs(m *opv1.AWSEFSVolumeMetrics) []string {
	if m == nil || m.State != opv1.AWSEFSVolumeMetricsRecursiveWalk {
		return nil
	}
	args := []string{"--vol-metrics-opt-in=true"}
	if rw := m.RecursiveWalk; rw != nil {
		if rw.RefreshPeriodMinutes > 0 {
			args = append(args, fmt.Sprintf("--vol-metrics-refresh-period=%d", rw.RefreshPeriodMinutes))
		}
		if rw.FSRateLimit > 0 {
			args = append(args, fmt.Sprintf("--vol-metrics-fs-rate-limit=%d", rw.FSRateLimit))
		}
	}
	return args
}

// volumeMetricsOf returns the EFS volume metrics settings of a ClusterCSIDriver, or nil.
func volumeMetricsOf(cr *opv1.ClusterCSIDriver) *opv1.AWSEFSVolumeMetrics {
	if cr == nil || cr.Spec.DriverConfig.AWS == nil {
		return nil
	}
	return cr.Spec.DriverConfig.AWS.EFSVolumeMetrics
}

// VolumeMetrics returns the DaemonSet hook that adds the volume metrics arguments of the ClusterCSIDriver named
// crName to the node driver container.
func VolumeMetrics(drivers operatorlisters.ClusterCSIDriverLister, crName string) func(*opv1.OperatorSpec, *appsv1.DaemonSet) error {
	return func(_ *opv1.OperatorSpec, ds *appsv1.DaemonSet) error {
		cr, err := drivers.Get(crName)
		if err != nil {
			return fmt.Errorf("reading ClusterCSIDriver %q for volume metrics: %w", crName, err)
		}
		c := container(&ds.Spec.Template.Spec, DriverContainer)
		if c == nil {
			return fmt.Errorf("volume metrics hook: no container %q in DaemonSet %s", DriverContainer, ds.Name)
		}
		c.Args = append(c.Args, VolumeMetricsArgs(volumeMetricsOf(cr))...)
		return nil
	}
}
