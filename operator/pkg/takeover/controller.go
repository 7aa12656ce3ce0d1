package takeover

import (
	"context"
	"errors"
	"fmt"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/klog/v2"
)

// ControllerName prefixes the controller's condition, AWSEFSCommunityDriverTakeoverControllerDegraded.
const ControllerName = "AWSEFSCommunityDriverTakeoverController"

// Inputs are what the controller reads.
type Inputs struct {
	// DaemonSets lists the community operator's node DaemonSets (efs-csi-node, OwnedLabel) in every namespace.
	DaemonSets         appslisters.DaemonSetLister
	DaemonSetsInformer factory.Informer
	// Deployments lists the community operator's Deployments (aws-efs-operator) in every namespace.
	Deployments         appslisters.DeploymentLister
	DeploymentsInformer factory.Informer
}

// New returns the controller that deletes the community operator's node DaemonSets once that operator no longer
// runs, and reports Degraded with the uninstall command while it does.
func New(operatorClient v1helpers.OperatorClientWithFinalizers, kube kubernetes.Interface, in Inputs, resync time.Duration, recorder events.Recorder) factory.Controller {
	c := &controller{operatorClient: operatorClient, kube: kube, in: in}
	return factory.New().
		WithInformers(operatorClient.Informer(), in.DaemonSetsInformer, in.DeploymentsInformer).
		WithSync(c.sync).
		ResyncEvery(resync).
		WithSyncDegradedOnError(operatorClient).
		ToController(ControllerName, recorder.WithComponentSuffix("takeover"))
}

type controller struct {
	operatorClient v1helpers.OperatorClientWithFinalizers
	kube           kubernetes.Interface
	in             Inputs
}

func (c *controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	spec, _, _, err := c.operatorClient.GetOperatorState()
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	meta, err := c.operatorClient.GetObjectMeta()
	if err != nil {
		return err
	}
	if spec.ManagementState != opv1.Managed || meta.DeletionTimestamp != nil {
		return nil
	}
	dss, err := communityDaemonSets(c.in.DaemonSets)
	if err != nil {
		return err
	}
	var errs []error
	var running []*appsv1.Deployment
	for _, ds := range dss {
		op, err := runningOperator(c.in.Deployments, ds.Namespace)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if op != nil {
			running = append(running, op)
			continue
		}
		if err := c.delete(ctx, ds); err != nil {
			errs = append(errs, err)
			continue
		}
		syncCtx.Recorder().Eventf("CommunityDriverReplaced", "Deleted DaemonSet %s/%s of the community aws-efs-operator; DaemonSet %s replaces it",
			ds.Namespace, ds.Name, "aws-efs-csi-driver-node")
	}
	if len(running) > 0 {
		errs = append(errs, stillRunningError(running))
	}
	return errors.Join(errs...)
}

// delete deletes the community DaemonSet ds, only if it is still the object that was listed (UID precondition).
func (c *controller) delete(ctx context.Context, ds *appsv1.DaemonSet) error {
	// Background propagation: the DaemonSet object goes at once and its pods are deleted by the garbage collector;
	// running pods' NFS mounts live in the kernel and survive the driver pods.
	policy := metav1.DeletePropagationBackground
	err := c.kube.AppsV1().DaemonSets(ds.Namespace).Delete(ctx, ds.Name, metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &ds.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the community aws-efs-operator's DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	klog.InfoS("Deleted the community aws-efs-operator's node DaemonSet; the driver's node DaemonSet replaces it", "namespace", ds.Namespace, "name", ds.Name)
	return nil
}
