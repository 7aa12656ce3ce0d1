package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/openshift/aws-efs-csi/operator/pkg/sharedvolume"
)

func sharedVolumeObject(ns, name, fsID, apID string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "aws-efs.managed.openshift.io/v1alpha1", "kind": "SharedVolume",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"fileSystemID": fsID, "accessPointID": apID},
	}}
}

func (e *env) sharedVolume(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	return e.dyn.Resource(sharedvolume.GroupVersionResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// waitSharedVolumeReady waits for phase Ready with claim pvc-<name>.
func (e *env) waitSharedVolumeReady(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, time.Minute, "SharedVolume "+name+" Ready", func(ctx context.Context) error {
		sv, err := e.sharedVolume(ctx, ns, name)
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(sv.Object, "status", "phase")
		claim, _, _ := unstructured.NestedString(sv.Object, "status", "claimRef", "name")
		if phase != "Ready" || claim != "pvc-"+name {
			return fmt.Errorf("phase %q claim %q message %v", phase, claim, sv.Object["status"])
		}
		if !slices.Contains(sv.GetFinalizers(), sharedvolume.Finalizer) {
			return fmt.Errorf("finalizers %v", sv.GetFinalizers())
		}
		return nil
	})
}

// TestSharedVolumeLifecycle covers the SharedVolume API: validation by the CRD, creation of the PV and PVC,
// immutability, repair of a deleted claim, a conflicting PV reported as Failed with an event, and deletion.
func TestSharedVolumeLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	const ns = "team-a"
	ok(e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(t)
	// SharedVolumes work without the ClusterCSIDriver: they are an API, not the driver.
	e.startOperator(testConfig())
	svs := e.dyn.Resource(sharedvolume.GroupVersionResource).Namespace(ns)

	// The CRD schema rejects malformed IDs.
	for _, bad := range []struct{ fs, ap, field string }{
		{"fs-XYZ", "fsap-0123", "fileSystemID"}, {"fs-0123", "ap-0123", "accessPointID"}, {"", "fsap-1", "fileSystemID"},
	} {
		_, err := svs.Create(ctx, sharedVolumeObject(ns, "bad", bad.fs, bad.ap), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), bad.field) {
			t.Errorf("creating a SharedVolume with %s/%s: err = %v, want Invalid naming %s", bad.fs, bad.ap, err, bad.field)
		}
	}

	ok(svs.Create(ctx, sharedVolumeObject(ns, "data", "fs-0123abcd", "fsap-0456ef"), metav1.CreateOptions{}))(t)
	e.waitSharedVolumeReady(t, ns, "data")
	pv := ok(e.kube.CoreV1().PersistentVolumes().Get(ctx, "pv-team-a-data", metav1.GetOptions{}))(t)
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != "efs.csi.aws.com" || pv.Spec.CSI.VolumeHandle != "fs-0123abcd::fsap-0456ef" ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Spec.AccessModes[0] != corev1.ReadWriteMany {
		t.Errorf("PV spec %+v", pv.Spec)
	}
	pvc := ok(e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "pvc-data", metav1.GetOptions{}))(t)
	if pvc.Spec.VolumeName != pv.Name || *pvc.Spec.StorageClassName != "efs-sc" {
		t.Errorf("PVC spec %+v", pvc.Spec)
	}

	// The IDs are immutable.
	patch := []byte(`{"spec":{"fileSystemID":"fs-99"}}`)
	if _, err := svs.Patch(ctx, "data", types.MergePatchType, patch, metav1.PatchOptions{}); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("changing fileSystemID: err = %v, want an immutability error", err)
	}
	// A label change is an accepted update and changes nothing else.
	ok(svs.Patch(ctx, "data", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"web"}}}`), metav1.PatchOptions{}))(t)

	// A deleted claim is recreated. (Nothing removes kubernetes.io/pvc-protection here, so the old claim stays
	// Terminating; drop the finalizer the way the controller-manager would once no pod uses the claim.)
	ok(0, e.kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "pvc-data", metav1.DeleteOptions{}))(t)
	e.releaseClaim(t, ns, "pvc-data")
	eventually(t, time.Minute, "deleted PVC recreated", func(ctx context.Context) error {
		got, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "pvc-data", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.UID == pvc.UID {
			return fmt.Errorf("still the old claim")
		}
		return nil
	})

	// A PV of the same name that is not ours: Failed, with the reason in status and a Warning event.
	ok(e.kube.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-team-a-clash"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "efs.csi.aws.com", VolumeHandle: "fs-1"}},
		},
	}, metav1.CreateOptions{}))(t)
	ok(svs.Create(ctx, sharedVolumeObject(ns, "clash", "fs-0123abcd", "fsap-0789"), metav1.CreateOptions{}))(t)
	eventually(t, time.Minute, "conflicting SharedVolume Failed with an event", func(ctx context.Context) error {
		sv, err := e.sharedVolume(ctx, ns, "clash")
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(sv.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(sv.Object, "status", "message")
		if phase != "Failed" || !strings.Contains(msg, "pv-team-a-clash") {
			return fmt.Errorf("phase %q message %q", phase, msg)
		}
		evs, err := e.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=clash"})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Type == corev1.EventTypeWarning && ev.Reason == "SharedVolumeFailed" {
				return nil
			}
		}
		return fmt.Errorf("no SharedVolumeFailed event among %d events", len(evs.Items))
	})

	// Deletion removes the claim and the volume, then the SharedVolume.
	ok(0, svs.Delete(ctx, "data", metav1.DeleteOptions{}))(t)
	eventually(t, time.Minute, "SharedVolume deleted with its PV and PVC", func(ctx context.Context) error {
		if _, err := e.sharedVolume(ctx, ns, "data"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("SharedVolume: %v", err)
		}
		if c, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "pvc-data", metav1.GetOptions{}); err == nil && c.DeletionTimestamp == nil {
			return fmt.Errorf("PVC not deleted")
		}
		if v, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, "pv-team-a-data", metav1.GetOptions{}); err == nil && v.DeletionTimestamp == nil {
			return fmt.Errorf("PV not deleted")
		}
		return nil
	})
}

// releaseClaim removes the protection finalizer from a deleted claim, as kube-controller-manager does once no pod
// uses it.
func (e *env) releaseClaim(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, 30*time.Second, "claim released", func(ctx context.Context) error {
		c, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && c.DeletionTimestamp == nil) {
			return nil
		}
		if err != nil {
			return err
		}
		c.Finalizers = nil
		_, err = e.kube.CoreV1().PersistentVolumeClaims(ns).Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
}
