package hooks

import (
	opv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// NodeDNSPolicy returns the DaemonSet hook that pins dnsPolicy: Default on the node pods. With host networking,
// Default uses the node's resolver (the Route 53 resolver of the node's own zone) so a One Zone file system's mount
// target resolves only in its zone, instead of depending on which zone a cluster DNS pod runs in.
func NodeDNSPolicy() func(*opv1.OperatorSpec, *appsv1.DaemonSet) error {
	return func(_ *opv1.OperatorSpec, ds *appsv1.DaemonSet) error {
		ds.Spec.Template.Spec.DNSPolicy = corev1.DNSDefault
		return nil
	}
}
