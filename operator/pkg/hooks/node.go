package hooks

import (
	"fmt"
	"sort"
	"strings"

	opv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	appslisters "k8s.io/client-go/listers/apps/v1"
)

// LegacyDaemonSetName is the node DaemonSet of the community aws-efs-operator. It registers the same kubelet
// plugin socket (/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock) as ours, so the two must never run together.
const LegacyDaemonSetName = "efs-csi-node"

// NodeDNSPolicy returns the DaemonSet hook that pins dnsPolicy: Default on the node pods. With host networking,
// Default uses the node's resolver (the Route 53 resolver of the node's own zone) so a One Zone file system's mount
// target resolves only in its zone, instead of depending on which zone a cluster DNS pod runs in.
func NodeDNSPolicy() func(*opv1.OperatorSpec, *appsv1.DaemonSet) error {
	return func(_ *opv1.OperatorSpec, ds *appsv1.DaemonSet) error {
		ds.Spec.Template.Spec.DNSPolicy = corev1.DNSDefault
		return nil
	}
}

// LegacyDriverGone returns the DaemonSet hook that holds back our node DaemonSet while a DaemonSet of the community
// aws-efs-operator still exists in any namespace (the takeover controller deletes it). The error becomes the node
// controller's Degraded message, so it says what the admin can do.
func LegacyDriverGone(daemonSets appslisters.DaemonSetLister) func(*opv1.OperatorSpec, *appsv1.DaemonSet) error {
	return func(_ *opv1.OperatorSpec, _ *appsv1.DaemonSet) error {
		all, err := daemonSets.List(labels.Everything())
		if err != nil {
			return fmt.Errorf("listing DaemonSets %s: %w", LegacyDaemonSetName, err)
		}
		var left []string
		for _, ds := range all {
			if ds.Name == LegacyDaemonSetName {
				left = append(left, ds.Namespace+"/"+ds.Name)
			}
		}
		if len(left) == 0 {
			return nil
		}
		sort.Strings(left)
		return fmt.Errorf("waiting for the community aws-efs-operator's node DaemonSet %s to be deleted: it registers the same CSI driver socket; "+
			"this operator deletes it, and if it comes back the community operator is still installed: uninstall it (keep its SharedVolume CRD)",
			strings.Join(left, ", "))
	}
}
