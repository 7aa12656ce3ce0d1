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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/operator/pkg/hooks"
)

// New returns the controller that deletes the community operator's node DaemonSets. legacy lists DaemonSets
// named efs-csi-node in every namespace.
func New(operatorClient v1helpers.OperatorClientWithFinalizers, kube kubernetes.Interface, legacy appslisters.DaemonSetLister,
	legacyInformer factory.Informer, resync time.Duration, recorder events.Recorder) factory.Controller {
	c := &controller{operatorClient: operatorClient, kube: kube, legacy: legacy}
	return factory.New().
		WithInformers(operatorClient.Informer(), legacyInformer).
		WithSync(c.sync).
		ResyncEvery(resync).
		WithSyncDegradedOnError(operatorClient).
		ToController("AWSEFSCommunityDriverTakeoverController", recorder.WithComponentSuffix("takeover"))
}

type controller struct {
	operatorClient v1helpers.OperatorClientWithFinalizers
	kube           kubernetes.Interface
	legacy         appslisters.DaemonSetLister
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
	all, err := c.legacy.List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	for _, ds := range all {
		if ds.Name != hooks.LegacyDaemonSetName || ds.DeletionTimestamp != nil {
			continue
		}
		// Background propagation: the DaemonSet object goes at once and its pods are deleted by the garbage
		// collector; running pods' NFS mounts live in the kernel and survive the driver pods.
		policy := metav1.DeletePropagationBackground
		err := c.kube.AppsV1().DaemonSets(ds.Namespace).Delete(ctx, ds.Name, metav1.DeleteOptions{
			PropagationPolicy: &policy,
			Preconditions:     &metav1.Preconditions{UID: &ds.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting the community aws-efs-operator's DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err))
			continue
		}
		klog.InfoS("Deleted the community aws-efs-operator's node DaemonSet; the driver's node DaemonSet replaces it", "namespace", ds.Namespace, "name", ds.Name)
		syncCtx.Recorder().Eventf("CommunityDriverReplaced", "Deleted DaemonSet %s/%s of the community aws-efs-operator; DaemonSet %s replaces it", ds.Namespace, ds.Name, "aws-efs-csi-driver-node")
	}
	return errors.Join(errs...)
}
