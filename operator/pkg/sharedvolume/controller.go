package sharedvolume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Clients are what the controller reads and writes.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// SharedVolumes is an informer on SharedVolumes in all namespaces.
	SharedVolumes cache.SharedIndexInformer
	// PVs and PVCs list the objects labelled openshift.io/aws-efs-operator-owned=true.
	PVs         corelisters.PersistentVolumeLister
	PVInformer  cache.SharedIndexInformer
	PVCs        corelisters.PersistentVolumeClaimLister
	PVCInformer cache.SharedIndexInformer
	// Events records events on SharedVolumes.
	Events record.EventRecorder
	// Grants says which access points each namespace may use; GrantsInformer is the informer behind its lister.
	Grants         Grants
	GrantsInformer cache.SharedIndexInformer
}

// Controller reconciles SharedVolumes.
type Controller struct {
	c Clients
}

// New returns the SharedVolume controller. It reconciles one SharedVolume per queue key, and all of them on
// every resync.
func New(c Clients, resync time.Duration, recorder events.Recorder) factory.Controller {
	ctrl := &Controller{c: c}
	return factory.New().
		WithSync(ctrl.sync).
		WithInformersQueueKeysFunc(svKey, c.SharedVolumes).
		WithInformersQueueKeysFunc(ownerKey, c.PVInformer, c.PVCInformer).
		WithInformersQueueKeysFunc(ctrl.allOnGrantChange, c.GrantsInformer).
		ResyncEvery(resync).
		ToController("SharedVolumeController", recorder.WithComponentSuffix("shared-volume"))
}

// allOnGrantChange queues every SharedVolume when the grants change: a new grant makes a Failed one Ready.
func (c *Controller) allOnGrantChange(obj runtime.Object) []string {
	if !isGrants(obj, c.c.Grants.Namespace) {
		return nil
	}
	return c.c.SharedVolumes.GetStore().ListKeys()
}

func svKey(obj runtime.Object) []string {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil
	}
	return []string{key}
}

// ownerKey maps a PV or PVC back to its SharedVolume through the owner labels.
func ownerKey(obj runtime.Object) []string {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	l := m.GetLabels()
	if l[LabelOwned] != "true" || l[LabelOwnerNamespace] == "" || l[LabelOwnerName] == "" {
		return nil
	}
	return []string{l[LabelOwnerNamespace] + "/" + l[LabelOwnerName]}
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	key := syncCtx.QueueKey()
	if key == factory.DefaultQueueKey {
		var errs []error
		for _, k := range c.c.SharedVolumes.GetStore().ListKeys() {
			errs = append(errs, c.reconcileKey(ctx, k))
		}
		return errors.Join(errs...)
	}
	return c.reconcileKey(ctx, key)
}

func (c *Controller) reconcileKey(ctx context.Context, key string) error {
	obj, exists, err := c.c.SharedVolumes.GetStore().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("SharedVolume %s: unexpected type %T in the informer", key, obj)
	}
	sv := &SharedVolume{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, sv); err != nil {
		return fmt.Errorf("SharedVolume %s: decoding: %w", key, err)
	}
	if sv.DeletionTimestamp != nil {
		return c.delete(ctx, sv)
	}
	return c.ensure(ctx, sv)
}

// ensure adds the finalizer, creates the PV and PVC when missing and reports the result in status.
func (c *Controller) ensure(ctx context.Context, sv *SharedVolume) error {
	if !slices.Contains(sv.Finalizers, Finalizer) {
		if err := c.setFinalizers(ctx, sv, append(slices.Clone(sv.Finalizers), Finalizer)); err != nil {
			return err
		}
		// A new SharedVolume is Pending until its PV and PVC exist. The update events requeue the object;
		// continue from the new version then.
		if sv.Status.Phase == "" {
			return c.setStatus(ctx, sv, Status{Phase: PhasePending})
		}
		return nil
	}
	if err := c.ensureObjects(ctx, sv); err != nil {
		c.c.Events.Eventf(ref(sv), corev1.EventTypeWarning, "SharedVolumeFailed", "%v", err)
		return errors.Join(err, c.setStatus(ctx, sv, Status{Phase: PhaseFailed, Message: err.Error()}))
	}
	return c.setStatus(ctx, sv, Status{Phase: PhaseReady, ClaimRef: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: PVCName(sv)}})
}

func (c *Controller) ensureObjects(ctx context.Context, sv *SharedVolume) error {
	if err := sv.Spec.Validate(); err != nil {
		return err
	}
	// Nothing is created for an access point the cluster admin did not grant to the namespace. What already
	// exists (a PV the community operator made, say) is left alone: taking it away under a running pod is the
	// admin's decision (delete the SharedVolume or the PV), not the operator's. Such a SharedVolume stays Ready:
	// its PV, which only a cluster-scoped writer could have made, is the grant it was given before this operator
	// (a community install taken over keeps every SharedVolume Ready).
	if err := c.c.Grants.Check(sv.Namespace, sv.Spec); err != nil && !c.hasOwnPV(sv) {
		return err
	}
	if err := c.ensurePV(ctx, sv); err != nil {
		return err
	}
	return c.ensurePVC(ctx, sv)
}

// ensurePV creates the SharedVolume's PV unless it exists. The lister can lag behind the API server (a PV this
// controller created a moment ago, or one an informer has not delivered yet), so AlreadyExists is answered by
// reading the live object, and only a PV that is not this SharedVolume's is a conflict.
func (c *Controller) ensurePV(ctx context.Context, sv *SharedVolume) error {
	pv, err := c.c.PVs.Get(PVName(sv))
	if apierrors.IsNotFound(err) {
		_, err = c.c.Kube.CoreV1().PersistentVolumes().Create(ctx, DesiredPV(sv), metav1.CreateOptions{})
		if err == nil {
			c.c.Events.Eventf(ref(sv), corev1.EventTypeNormal, "PersistentVolumeCreated", "Created PersistentVolume %s for %s", PVName(sv), sv.Spec.VolumeHandle())
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PersistentVolume %s: %w", PVName(sv), err)
		}
		if pv, err = c.c.Kube.CoreV1().PersistentVolumes().Get(ctx, PVName(sv), metav1.GetOptions{}); err != nil {
			return fmt.Errorf("reading PersistentVolume %s: %w", PVName(sv), err)
		}
	} else if err != nil {
		return err
	}
	return checkPV(pv, sv)
}

// hasOwnPV reports whether the SharedVolume's PV exists already, labelled as its own and serving its access point.
func (c *Controller) hasOwnPV(sv *SharedVolume) bool {
	pv, err := c.c.PVs.Get(PVName(sv))
	return err == nil && checkPV(pv, sv) == nil
}

// checkPV reports whether an existing PV is the SharedVolume's, serving its access point.
func checkPV(pv *corev1.PersistentVolume, sv *SharedVolume) error {
	if !hasLabels(pv.Labels, ownerLabels(sv)) {
		return fmt.Errorf("PersistentVolume %s exists and does not belong to this SharedVolume: rename the SharedVolume or delete the PersistentVolume", pv.Name)
	}
	if h := handleOf(pv); h != sv.Spec.VolumeHandle() {
		return fmt.Errorf("PersistentVolume %s serves %q but the SharedVolume asks for %q: PersistentVolumes are immutable, delete and recreate the SharedVolume", pv.Name, h, sv.Spec.VolumeHandle())
	}
	return nil
}

// ensurePVC creates the SharedVolume's claim unless it exists, reading the live object on AlreadyExists as
// ensurePV does.
func (c *Controller) ensurePVC(ctx context.Context, sv *SharedVolume) error {
	want := DesiredPVC(sv)
	pvc, err := c.c.PVCs.PersistentVolumeClaims(sv.Namespace).Get(PVCName(sv))
	if apierrors.IsNotFound(err) {
		_, err = c.c.Kube.CoreV1().PersistentVolumeClaims(sv.Namespace).Create(ctx, want, metav1.CreateOptions{})
		if err == nil {
			c.c.Events.Eventf(ref(sv), corev1.EventTypeNormal, "PersistentVolumeClaimCreated", "Created PersistentVolumeClaim %s", PVCName(sv))
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PersistentVolumeClaim %s/%s: %w", sv.Namespace, PVCName(sv), err)
		}
		if pvc, err = c.c.Kube.CoreV1().PersistentVolumeClaims(sv.Namespace).Get(ctx, PVCName(sv), metav1.GetOptions{}); err != nil {
			return fmt.Errorf("reading PersistentVolumeClaim %s/%s: %w", sv.Namespace, PVCName(sv), err)
		}
	} else if err != nil {
		return err
	}
	if !hasLabels(pvc.Labels, ownerLabels(sv)) {
		return fmt.Errorf("PersistentVolumeClaim %s/%s exists and does not belong to this SharedVolume: rename the SharedVolume or delete the claim", sv.Namespace, PVCName(sv))
	}
	if pvc.Spec.VolumeName != want.Spec.VolumeName && pvc.Spec.VolumeName != "" {
		return fmt.Errorf("PersistentVolumeClaim %s/%s is bound to %s, not %s: delete the claim so it is recreated", pvc.Namespace, pvc.Name, pvc.Spec.VolumeName, want.Spec.VolumeName)
	}
	return nil
}

// delete removes the PVC and the PV, then the finalizer. A claim still used by a pod stays Terminating until the
// pod is gone; the SharedVolume does not wait for that.
func (c *Controller) delete(ctx context.Context, sv *SharedVolume) error {
	if !slices.Contains(sv.Finalizers, Finalizer) {
		return nil
	}
	if sv.Status.Phase != PhaseDeleting {
		if err := c.setStatus(ctx, sv, Status{Phase: PhaseDeleting, ClaimRef: sv.Status.ClaimRef}); err != nil {
			return err
		}
	}
	if pvc, err := c.c.PVCs.PersistentVolumeClaims(sv.Namespace).Get(PVCName(sv)); err == nil && pvc.DeletionTimestamp == nil {
		if err := c.c.Kube.CoreV1().PersistentVolumeClaims(sv.Namespace).Delete(ctx, pvc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting PersistentVolumeClaim %s/%s: %w", sv.Namespace, pvc.Name, err)
		}
	}
	if pv, err := c.c.PVs.Get(PVName(sv)); err == nil && pv.DeletionTimestamp == nil {
		if err := c.c.Kube.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting PersistentVolume %s: %w", pv.Name, err)
		}
	}
	klog.V(2).InfoS("Deleted the volumes of a SharedVolume", "namespace", sv.Namespace, "name", sv.Name, "pv", PVName(sv), "pvc", PVCName(sv))
	return c.setFinalizers(ctx, sv, slices.DeleteFunc(slices.Clone(sv.Finalizers), func(f string) bool { return f == Finalizer }))
}

func (c *Controller) setFinalizers(ctx context.Context, sv *SharedVolume, finalizers []string) error {
	u, err := c.c.Dynamic.Resource(GroupVersionResource).Namespace(sv.Namespace).Get(ctx, sv.Name, metav1.GetOptions{})
	if err != nil {
		return client(err, sv, "reading")
	}
	u.SetFinalizers(finalizers)
	_, err = c.c.Dynamic.Resource(GroupVersionResource).Namespace(sv.Namespace).Update(ctx, u, metav1.UpdateOptions{})
	return client(err, sv, "updating the finalizers of")
}

// setStatus writes status when it differs from what sv has.
func (c *Controller) setStatus(ctx context.Context, sv *SharedVolume, st Status) error {
	if equalStatus(sv.Status, st) {
		return nil
	}
	u, err := c.c.Dynamic.Resource(GroupVersionResource).Namespace(sv.Namespace).Get(ctx, sv.Name, metav1.GetOptions{})
	if err != nil {
		return client(err, sv, "reading")
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return err
	}
	u.Object["status"] = m
	_, err = c.c.Dynamic.Resource(GroupVersionResource).Namespace(sv.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return client(err, sv, "updating the status of")
}

func equalStatus(a, b Status) bool {
	if a.Phase != b.Phase || a.Message != b.Message || (a.ClaimRef == nil) != (b.ClaimRef == nil) {
		return false
	}
	return a.ClaimRef == nil || *a.ClaimRef == *b.ClaimRef
}

func client(err error, sv *SharedVolume, op string) error {
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("%s SharedVolume %s/%s: %w", op, sv.Namespace, sv.Name, err)
}

// ref is the event target for sv.
func ref(sv *SharedVolume) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: GroupVersionResource.GroupVersion().String(), Kind: Kind,
		Namespace: sv.Namespace, Name: sv.Name, UID: sv.UID, ResourceVersion: sv.ResourceVersion}
}

// OwnedSelector selects the PVs and PVCs of SharedVolumes.
func OwnedSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelOwned: "true"})
}
