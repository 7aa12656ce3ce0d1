package takeover

import (
	"fmt"
	"sort"
	"strings"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

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
	// PodLabel is the label its node DaemonSet's pods carry, app=efs-csi-node (openshift/aws-efs-operator@4bc180b
	// pkg/controller/statics/defs/daemonset.yaml; the upstream manifests it was copied from use the same).
	PodLabel = "app"
)

// PodSelector selects the pods of an efs-csi-node DaemonSet, the community operator's or an upstream install's.
func PodSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{PodLabel: DaemonSetName})
}

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
// exists (the takeover controller deletes it) and then until the last of its pods is gone. The takeover deletes
// the DaemonSet with background propagation, so its pods outlive it: the garbage collector deletes them
// afterwards and each keeps running through its termination grace period. Until then it still serves
// /var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock and the registration socket on its node, which our node plugin
// would take over underneath it. The error becomes the node controller's Degraded message, so it says what the
// admin can do. It never runs while the ClusterCSIDriver is Removed or being deleted.
//
// dss must list the DaemonSets named efs-csi-node (whatever their labels), pods the pods labelled PodSelector.
func HoldBackHook(dss appslisters.DaemonSetLister, pods corelisters.PodLister, drivers operatorlisters.ClusterCSIDriverLister, crName string) func(*opv1.OperatorSpec, *appsv1.DaemonSet) error {
	return whilemanaged.Hook(drivers, crName, func(_ *opv1.OperatorSpec, _ *appsv1.DaemonSet) error {
		left, err := communityDaemonSets(dss)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			var names []string
			for _, ds := range left {
				names = append(names, ds.Namespace+"/"+ds.Name)
			}
			return fmt.Errorf("waiting for the community aws-efs-operator's node DaemonSet %s to be deleted: it registers the same CSI driver socket; "+
				"this operator deletes it once the community operator is uninstalled (see the condition AWSEFSCommunityDriverTakeoverControllerDegraded)",
				strings.Join(names, ", "))
		}
		running, err := CommunityPods(dss, pods)
		if err != nil || len(running) == 0 {
			return err
		}
		var names []string
		for _, p := range running {
			names = append(names, fmt.Sprintf("%s/%s on node %q", p.Namespace, p.Name, p.Spec.NodeName))
		}
		return fmt.Errorf("waiting for %d pod(s) of the deleted community node DaemonSet %s to stop: they still serve the kubelet plugin socket "+
			"/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock this operator's node plugin uses: %s", len(running), DaemonSetName, strings.Join(names, ", "))
	})
}

// StuckPodGrace is how long after its deletion deadline a community pod that still exists is taken for one on a
// lost node.
const StuckPodGrace = time.Minute

// CommunityPods returns, sorted, the pods of the community node DaemonSet that have not finished: pods labelled
// PodSelector whose controlling owner is a DaemonSet named efs-csi-node that is the community operator's or no
// longer exists (deleted by the takeover; its pods are terminating or waiting for the garbage collector). Pods of
// an efs-csi-node DaemonSet that exists without the community operator's label belong to someone else.
func CommunityPods(dss appslisters.DaemonSetLister, pods corelisters.PodLister) ([]*corev1.Pod, error) {
	all, err := pods.List(PodSelector())
	if err != nil {
		return nil, fmt.Errorf("listing pods %s: %w", PodSelector(), err)
	}
	var out []*corev1.Pod
	for _, p := range all {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		// A pod still there a minute past its deletion deadline is on a node whose kubelet is gone (as the
		// uninstall controller judges it): nothing runs it any more, and waiting for it would hold back every node.
		if p.DeletionTimestamp != nil && time.Since(p.DeletionTimestamp.Time) > StuckPodGrace {
			continue
		}
		owner := metav1.GetControllerOf(p)
		if owner == nil || owner.Kind != "DaemonSet" || owner.Name != DaemonSetName {
			continue
		}
		ds, err := dss.DaemonSets(p.Namespace).Get(owner.Name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		case ds.UID != owner.UID:
			// A DaemonSet of the same name made since; the pod's own owner is gone.
		case !IsCommunityDaemonSet(ds):
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out, nil
}
