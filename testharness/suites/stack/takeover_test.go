//go:build cluster

package stack

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	efstypes "github.com/aws/aws-sdk-go-v2/service/efs/types"
	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/openshift/aws-efs-csi/operator/assets"
	"github.com/openshift/aws-efs-csi/operator/pkg/hooks"
	"github.com/openshift/aws-efs-csi/operator/pkg/sharedvolume"
	"github.com/openshift/aws-efs-csi/operator/pkg/takeover"
	"github.com/openshift/aws-efs-csi/testharness/suites/bundleinstall"
)

// communityNamespace is where the community aws-efs-operator ran (installed through OLM in all namespaces).
const communityNamespace = "openshift-operators"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// communityInstall is what the community aws-efs-operator left on the cluster, as the takeover finds it.
type communityInstall struct {
	daemonSet *appsv1.DaemonSet
	csiDriver *storagev1.CSIDriver
	pv        *corev1.PersistentVolume
	pvc       *corev1.PersistentVolumeClaim
	// app runs on the SharedVolume's claim, mounted by the community node plugin.
	app *corev1.Pod
}

// leaveCommunityInstall makes the cluster look as the community aws-efs-operator leaves it once its operator is
// uninstalled (seed 001's takeover workflow): its node DaemonSet efs-csi-node with the ownership label, its CSIDriver
// owned by the SharedVolume CRD, a SharedVolume with the PV and PVC it made, and an application pod writing on that
// claim through the community node plugin.
//
// What is not the community operator's own: its node plugin runs this release's driver image for the cluster (the
// images of older upstream drivers cannot be pulled here) with the node DaemonSet's containers of this release,
// and the CRD is the one our bundle ships (same group, kind and schema: ours serves the community's objects).
func (s *stack) leaveCommunityInstall(t *testing.T) *communityInstall {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: communityNamespace}}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	crd := s.createSharedVolumeCRD(t)
	c := &communityInstall{}
	var err error
	c.csiDriver, err = s.kube.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: driverName, Labels: map[string]string{takeover.OwnedLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.GetName(), UID: crd.GetUID()}}},
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.daemonSet = s.startCommunityNodePlugin(t)

	// The SharedVolume's access point, then the SharedVolume, PV and PVC as the community operator made them.
	out, err := s.efsClient(t).CreateAccessPoint(ctx, &efs.CreateAccessPointInput{
		FileSystemId: aws.String(s.aws.RegionalFileSystemID),
		PosixUser:    &efstypes.PosixUser{Uid: aws.Int64(1000), Gid: aws.Int64(1000)},
		RootDirectory: &efstypes.RootDirectory{Path: aws.String("/community"),
			CreationInfo: &efstypes.CreationInfo{OwnerUid: aws.Int64(1000), OwnerGid: aws.Int64(1000), Permissions: aws.String("0777")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	svTyped := &sharedvolume.SharedVolume{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "default"},
		Spec: sharedvolume.Spec{FileSystemID: s.aws.RegionalFileSystemID, AccessPointID: aws.ToString(out.AccessPointId)}}
	sv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "aws-efs.managed.openshift.io/v1alpha1", "kind": "SharedVolume",
		"metadata": map[string]any{"name": svTyped.Name, "namespace": svTyped.Namespace, "finalizers": []any{sharedvolume.Finalizer}},
		"spec":     map[string]any{"fileSystemID": svTyped.Spec.FileSystemID, "accessPointID": svTyped.Spec.AccessPointID},
	}}
	if sv, err = s.dyn.Resource(sharedvolume.GroupVersionResource).Namespace(svTyped.Namespace).Create(ctx, sv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedMap(sv.Object, map[string]any{"phase": "Ready",
		"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "name": sharedvolume.PVCName(svTyped)}}, "status")
	if _, err := s.dyn.Resource(sharedvolume.GroupVersionResource).Namespace(svTyped.Namespace).UpdateStatus(ctx, sv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if c.pv, err = s.kube.CoreV1().PersistentVolumes().Create(ctx, sharedvolume.DesiredPV(svTyped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if c.pvc, err = s.kube.CoreV1().PersistentVolumeClaims(svTyped.Namespace).Create(ctx, sharedvolume.DesiredPVC(svTyped), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.app = s.startAppOn(t, "community-app", c.pvc.Name, "before-takeover")
	return c
}

// createSharedVolumeCRD creates the SharedVolume CRD from the bundle and waits until it is established.
func (s *stack) createSharedVolumeCRD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	ctx := t.Context()
	b, err := bundleinstall.Read(filepath.Join(stackDir, BundleDir))
	if err != nil {
		t.Fatal(err)
	}
	name := sharedvolume.GroupVersionResource.GroupResource().String()
	for _, m := range b.Manifests {
		if m.GetKind() != "CustomResourceDefinition" || m.GetName() != name {
			continue
		}
		if _, err := s.dyn.Resource(crdGVR).Create(ctx, m.DeepCopy(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var crd *unstructured.Unstructured
		eventually(t, time.Minute, "CRD "+name+" established", func(ctx context.Context) error {
			crd, err = s.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("conditions %v", conds)
		})
		return crd
	}
	t.Fatalf("the bundle has no CRD %s", name)
	return nil
}

// startCommunityNodePlugin runs the community operator's node DaemonSet efs-csi-node (with its ownership label) and
// waits until its pod is ready. Its pod is this release's node pod, given what our operator's hooks would give it on
// this cluster (the AWS endpoints, the trusted CA bundle, the node credentials), in the community namespace with a
// ServiceAccount of its own that may read Nodes.
func (s *stack) startCommunityNodePlugin(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	ctx := t.Context()
	values := map[string]string{assets.Namespace: communityNamespace}
	images, err := ReadImages(stackDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range images {
		values["${"+im.Placeholder+"}"] = im.Ref
	}
	manifest, err := assets.Render(assets.NodeDaemonSet, values)
	if err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(string(manifest), "${LOG_LEVEL}", "2")), ds); err != nil {
		t.Fatal(err)
	}
	const name, sa = takeover.DaemonSetName, "efs-csi-node-sa"
	selector := map[string]string{"app": name}
	ds.Name, ds.Labels = name, map[string]string{takeover.OwnedLabel: "true"}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector}
	ds.Spec.Template.Labels = selector
	ds.Spec.Template.Annotations = nil
	pod := &ds.Spec.Template.Spec
	pod.ServiceAccountName = sa

	u, err := s.dyn.Resource(configv1.GroupVersion.WithResource("infrastructures")).Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	infra := &configv1.Infrastructure{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, infra); err != nil {
		t.Fatal(err)
	}
	env, err := hooks.ServiceEndpointsEnv(infra)
	if err != nil {
		t.Fatal(err)
	}
	const caBundle = "efs-csi-trusted-ca-bundle"
	for i := range pod.Containers {
		if pod.Containers[i].Name == hooks.DriverContainer {
			pod.Containers[i].Env = append(pod.Containers[i].Env, env...)
			pod.Containers[i].VolumeMounts = append(pod.Containers[i].VolumeMounts,
				corev1.VolumeMount{Name: "trusted-ca", MountPath: "/etc/pki/ca-trust/extracted/pem", ReadOnly: true})
		}
	}
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "trusted-ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: caBundle},
		Items:                []corev1.KeyToPath{{Key: "ca-bundle.crt", Path: "tls-ca-bundle.pem"}},
	}}})

	// The trusted CA bundle (filled by the cluster network operator's stand-in), the node's AWS keys and the
	// ServiceAccount with the right to read Nodes.
	objs := []struct {
		what   string
		create func() error
	}{
		{"ConfigMap", func() error {
			_, err := s.kube.CoreV1().ConfigMaps(communityNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: caBundle, Namespace: communityNamespace, Labels: map[string]string{trustedCALabel: "true"}}}, metav1.CreateOptions{})
			return err
		}},
		{"Secret", func() error {
			_, err := s.kube.CoreV1().Secrets(communityNamespace).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: hooks.NodeCredentialsSecret, Namespace: communityNamespace},
				StringData: map[string]string{"aws_access_key_id": "AKIACOMMUNITY", "aws_secret_access_key": "community-secret"}}, metav1.CreateOptions{})
			return err
		}},
		{"ServiceAccount", func() error {
			_, err := s.kube.CoreV1().ServiceAccounts(communityNamespace).Create(ctx, &corev1.ServiceAccount{
				ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: communityNamespace}}, metav1.CreateOptions{})
			return err
		}},
		{"ClusterRole", func() error {
			_, err := s.kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "efs-csi-community-node"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
			return err
		}},
		{"ClusterRoleBinding", func() error {
			_, err := s.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "efs-csi-community-node"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: communityNamespace}},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "efs-csi-community-node"}}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, o := range objs {
		if err := o.create(); err != nil {
			t.Fatalf("the community node plugin's %s: %v", o.what, err)
		}
	}
	eventually(t, time.Minute, "trusted CA bundle injected into "+communityNamespace+"/"+caBundle, func(ctx context.Context) error {
		cm, err := s.kube.CoreV1().ConfigMaps(communityNamespace).Get(ctx, caBundle, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["ca-bundle.crt"] == "" {
			return fmt.Errorf("no ca-bundle.crt yet")
		}
		return nil
	})
	created, err := s.kube.AppsV1().DaemonSets(communityNamespace).Create(ctx, ds, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "community node plugin ready and registered with the kubelet", func(ctx context.Context) error {
		if err := s.podsReady(ctx, communityNamespace, ds.Spec.Selector); err != nil {
			return err
		}
		nodes, err := s.kube.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, n := range nodes.Items {
			for _, d := range n.Spec.Drivers {
				if d.Name == driverName {
					return nil
				}
			}
		}
		return fmt.Errorf("no CSINode lists %s", driverName)
	})
	return created
}

// clusterCSIDriverMissingAlert checks what the operator shows while no ClusterCSIDriver exists: the info alert's
// rule; and that it touches nothing of the community install meanwhile.
func (s *stack) clusterCSIDriverMissingAlert(t *testing.T, c *communityInstall) {
	t.Helper()
	rules := schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}
	eventually(t, 2*time.Minute, "PrometheusRule with the missing-ClusterCSIDriver alert", func(ctx context.Context) error {
		rule, err := s.dyn.Resource(rules).Namespace(namespace).Get(ctx, operatorName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		b, _ := rule.MarshalJSON()
		if !strings.Contains(string(b), `"alert":"AWSEFSClusterCSIDriverMissing"`) || !strings.Contains(string(b), `"severity":"info"`) {
			return fmt.Errorf("rule without the info alert: %s", b)
		}
		return nil
	})
	ds, err := s.kube.AppsV1().DaemonSets(communityNamespace).Get(t.Context(), c.daemonSet.Name, metav1.GetOptions{})
	if err != nil || ds.Generation != c.daemonSet.Generation {
		t.Fatalf("the community node DaemonSet changed before the ClusterCSIDriver exists: %v", err)
	}
	if _, err := s.kube.AppsV1().DaemonSets(namespace).Get(t.Context(), nodeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("our node DaemonSet exists before the ClusterCSIDriver does (%v)", err)
	}
}

// takenOver checks the takeover once the ClusterCSIDriver exists: the community DaemonSet is gone and ours runs,
// the CSIDriver was adopted in place, the SharedVolume kept its PV and claim and is Ready, and the application
// pod kept its mount: the same pod, never restarted, still writing, its file readable through our node plugin.
func (s *stack) takenOver(t *testing.T, c *communityInstall) {
	t.Helper()
	ctx := t.Context()
	eventually(t, 3*time.Minute, "community node DaemonSet deleted", func(ctx context.Context) error {
		if _, err := s.kube.AppsV1().DaemonSets(communityNamespace).Get(ctx, c.daemonSet.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	csi, err := s.kube.StorageV1().CSIDrivers().Get(ctx, driverName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if csi.UID != c.csiDriver.UID || len(csi.OwnerReferences) != 0 {
		t.Errorf("CSIDriver UID %s (was %s), owner references %v: want it adopted in place, no longer owned by the CRD", csi.UID, c.csiDriver.UID, csi.OwnerReferences)
	}
	if pv, err := s.kube.CoreV1().PersistentVolumes().Get(ctx, c.pv.Name, metav1.GetOptions{}); err != nil || pv.UID != c.pv.UID {
		t.Errorf("the SharedVolume's PV %s: %v; want the same object", c.pv.Name, err)
	}
	if pvc, err := s.kube.CoreV1().PersistentVolumeClaims(c.pvc.Namespace).Get(ctx, c.pvc.Name, metav1.GetOptions{}); err != nil || pvc.UID != c.pvc.UID || pvc.Status.Phase != corev1.ClaimBound {
		t.Errorf("the SharedVolume's claim %s: %v; want the same object, Bound", c.pvc.Name, err)
	}
	s.appNeverRestarted(t, c.app)
	// A new pod on the claim mounts through our node plugin and sees the application's file grow.
	s.runPod(t, "read-community", c.pvc.Name,
		`a=$(wc -l < /data/app.log); sleep 3; b=$(wc -l < /data/app.log); [ "$b" -gt "$a" ] && echo "first=$(head -1 /data/app.log) growing"`,
		"first=before-takeover growing")
	eventually(t, 2*time.Minute, "SharedVolume default/legacy Ready", func(ctx context.Context) error {
		got, err := s.dyn.Resource(sharedvolume.GroupVersionResource).Namespace("default").Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != string(sharedvolume.PhaseReady) {
			msg, _, _ := unstructured.NestedString(got.Object, "status", "message")
			return fmt.Errorf("phase %q: %s", phase, msg)
		}
		return nil
	})
}
