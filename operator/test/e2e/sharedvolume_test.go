package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

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

	e.grantSharedVolumes(t, map[string]string{ns: "fs-0123abcd"})
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

// grantSharedVolumes writes the cluster admin's SharedVolume grants (sharedvolume.GrantsConfigMap) with data.
func (e *env) grantSharedVolumes(t *testing.T, data map[string]string) {
	t.Helper()
	cms := e.kube.CoreV1().ConfigMaps(namespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: sharedvolume.GrantsConfigMap, Namespace: namespace}, Data: data}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		ok(cms.Update(t.Context(), cm, metav1.UpdateOptions{}))(t)
	} else if err != nil {
		t.Fatal(err)
	}
}

// sharedVolumeEditRole is the ClusterRole OLM v0.38 generates for an owned CRD in an AllNamespaces install, which
// aggregates into the cluster's edit role (operator-framework/operator-lifecycle-manager@6838e5e (v0.38.0)
// pkg/controller/operators/olm/operatorgroup.go, ensureProvidedAPIClusterRole: name <crd>-<version>-edit, label
// rbac.authorization.k8s.io/aggregate-to-edit, the CRD's resource with EditVerbs).
func sharedVolumeEditRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "sharedvolumes.aws-efs.managed.openshift.io-v1alpha1-edit",
			Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"aws-efs.managed.openshift.io"}, Resources: []string{"sharedvolumes"},
			Verbs: []string{"create", "update", "patch", "delete", "get", "list", "watch"}}},
	}
}

// TestSharedVolumeNeedsAGrant: a project editor, who may create SharedVolumes through the role OLM aggregates
// into edit, cannot mount an access point the cluster admin did not grant to the project: the SharedVolume is
// Failed with the grant to add, and no PersistentVolume is made. Once the admin grants it, it becomes Ready.
// (This control plane runs no role aggregation controller, so the editor is bound to OLM's role directly.)
func TestSharedVolumeNeedsAGrant(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	const ns, user = "team-a", "alice"
	ok(e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(t)
	role := ok(e.kube.RbacV1().ClusterRoles().Create(ctx, sharedVolumeEditRole(), metav1.CreateOptions{}))(t)
	ok(e.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-edit", Namespace: ns},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}, metav1.CreateOptions{}))(t)
	// Another tenant's file system, granted to another project only.
	e.grantSharedVolumes(t, map[string]string{"team-b": "fs-0abc"})
	e.startOperator(testConfig())

	as := rest.CopyConfig(e.cl.Config)
	as.Impersonate = rest.ImpersonationConfig{UserName: user}
	alice := ok(dynamic.NewForConfig(as))(t)
	ok(alice.Resource(sharedvolume.GroupVersionResource).Namespace(ns).Create(ctx, sharedVolumeObject(ns, "theirs", "fs-0abc", "fsap-0def"), metav1.CreateOptions{}))(t)
	eventually(t, time.Minute, "SharedVolume of an access point not granted Failed", func(ctx context.Context) error {
		sv, err := e.sharedVolume(ctx, ns, "theirs")
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(sv.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(sv.Object, "status", "message")
		if phase != "Failed" || !strings.Contains(msg, "not granted to namespace team-a") || !strings.Contains(msg, sharedvolume.GrantsConfigMap) {
			return fmt.Errorf("phase %q message %q", phase, msg)
		}
		return nil
	})
	if _, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, "pv-team-a-theirs", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("PersistentVolume made for an access point not granted (%v)", err)
	}
	// Alice cannot grant it herself: the grants live in the operator's namespace.
	if _, err := ok(kubernetes.NewForConfig(as))(t).CoreV1().ConfigMaps(namespace).Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: sharedvolume.GrantsConfigMap}, Data: map[string]string{ns: "fs-0abc"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("project editor writing the grants: %v, want Forbidden", err)
	}

	e.grantSharedVolumes(t, map[string]string{"team-b": "fs-0abc", ns: "fs-0abc::fsap-0def"})
	e.waitSharedVolumeReady(t, ns, "theirs")
	if pv := ok(e.kube.CoreV1().PersistentVolumes().Get(ctx, "pv-team-a-theirs", metav1.GetOptions{}))(t); pv.Spec.CSI.VolumeHandle != "fs-0abc::fsap-0def" {
		t.Fatalf("PersistentVolume handle %q", pv.Spec.CSI.VolumeHandle)
	}
}
