package takeover

import (
	"fmt"
	"sort"
	"strings"

	opv1 "github.com/openshift/api/operator/v1"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	appslisters "k8s.io/client-go/listers/apps/v1"

	"github.com/openshift/aws-efs-csi/operator/pkg/whilemanaged"
)

// What the community aws-efs-operator (openshift/aws-efs-operator) creates. It runs its node DaemonSet in its own
// namespace (normally openshift-operators) and labels everything it owns with OwnedLabel=true.
const (
	// DaemonSetName is its node DaemonSet. It registers the same kubelet plugin socket
	// (/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock) as ours, so the two must never run together.
	DaemonSetName = "efs-csi-node"
	// OwnedLabel marks the objects it owns.
	OwnedLabel = "openshift.io/aws-efs-operator-owned"
	// DeploymentName is the operator's own Deployment, in the same namespace as its DaemonSet.
	DeploymentName = "aws-efs-operator"
	// PackageName is its OLM package.
	PackageName = "aws-efs-operator"
)

// OwnedSelector selects objects the community operator owns.
func OwnedSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{OwnedLabel: "true"})
}

// IsCommunityDaemonSet reports whether ds is the community operator's node DaemonSet: named efs-csi-node and
// carrying its ownership label. A DaemonSet of that name without the label (an upstream Helm or kustomize install,
// say) belongs to someone else and is never touched.
func IsCommunityDaemonSet(ds *appsv1.DaemonSet) bool {
	return ds.Name == DaemonSetName && OwnedSelector().Matches(labels.Set(ds.Labels))
}

// communityDaemonSets lists the community operator's node DaemonSets that are not being deleted, sorted.
func communityDaemonSets(dss appslisters.DaemonSetLister) ([]*appsv1.DaemonSet, error) {
	all, err := dss.List(OwnedSelector())
	if err != nil {
		return nil, fmt.Errorf("listing DaemonSets %s: %w", DaemonSetName, err)
	}
	var out []*appsv1.DaemonSet
	for _, ds := range all {
		if IsCommunityDaemonSet(ds) && ds.DeletionTimestamp == nil {
			out = append(out, ds)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out, nil
}

// runningOperator returns the community operator's Deployment in namespace when it exists and has an available
// replica: that operator recreates its DaemonSet at once, so deleting it would only start a fight.
func runningOperator(deployments appslisters.DeploymentLister, namespace string) (*appsv1.Deployment, error) {
	d, err := deployments.Deployments(namespace).Get(DeploymentName)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if d.DeletionTimestamp != nil || d.Status.AvailableReplicas == 0 {
		return nil, nil
	}
	return d, nil
}

// UninstallCommand is the command that uninstalls the community operator whose Deployment is d, keeping its
// SharedVolume CRD and SharedVolumes: OLM labels the Subscription and CSV of a package with
// operators.coreos.com/<package>.<namespace>; without OLM the Deployment itself goes.
func UninstallCommand(d *appsv1.Deployment) string {
	if _, ok := d.Labels["olm.owner"]; ok {
		return fmt.Sprintf("oc delete subscription,clusterserviceversion -n %s -l operators.coreos.com/%s.%s", d.Namespace, PackageName, d.Namespace)
	}
	return fmt.Sprintf("oc delete deployment -n %s %s", d.Namespace, DeploymentName)
}

// stillRunningError tells the admin to uninstall the community operators in deps.
func stillRunningError(deps []*appsv1.Deployment) error {
	var parts []string
	for _, d := range deps {
		parts = append(parts, fmt.Sprintf("namespace %s: %s", d.Namespace, UninstallCommand(d)))
	}
	return fmt.Errorf("the community aws-efs-operator still runs and recreates its node DaemonSet %s, which registers the same CSI "+
		"driver socket as this operator's; uninstall it (its SharedVolume CRD and SharedVolumes stay and are served by this operator), "+
		"then this operator replaces its driver: %s", DaemonSetName, strings.Join(parts, "; "))
}

// HoldBackHook returns the DaemonSet hook that holds back our node DaemonSet while a community node DaemonSet
// exists (the takeover controller deletes it). The error becomes the node controller's Degraded message, so it
// says what the admin can do. It never runs while the ClusterCSIDriver is Removed or being deleted.
func HoldBackHook(dss appslisters.DaemonSetLister, drivers operatorlisters.ClusterCSIDriverLister, crName string) func(*opv1.OperatorSpec, *appsv1.DaemonSet) error {
	return whilemanaged.Hook(drivers, crName, func(_ *opv1.OperatorSpec, _ *appsv1.DaemonSet) error {
		left, err := communityDaemonSets(dss)
		if err != nil || len(left) == 0 {
			return err
		}
		var names []string
		for _, ds := range left {
			names = append(names, ds.Namespace+"/"+ds.Name)
		}
		return fmt.Errorf("waiting for the community aws-efs-operator's node DaemonSet %s to be deleted: it registers the same CSI driver socket; "+
			"this operator deletes it once the community operator is uninstalled (see the condition AWSEFSCommunityDriverTakeoverControllerDegraded)",
			strings.Join(names, ", "))
	})
}
