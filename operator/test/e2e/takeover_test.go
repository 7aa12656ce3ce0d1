package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/openshift/aws-efs-csi/operator/pkg/sharedvolume"
)

// legacyDaemonSet is a node DaemonSet as the community aws-efs-operator (or an older version of this operator,
// with name aws-efs-csi-driver-node) left it.
func legacyDaemonSet(ns, name, image string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true,
					DNSPolicy:   corev1.DNSClusterFirstWithHostNet,
					Containers: []corev1.Container{{
						Name: "csi-driver", Image: image, Args: []string{"--endpoint=$(CSI_ENDPOINT)", "--v=5"},
						SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
					}},
				},
			},
		},
	}
}

// TestTakeoverFromCommunityOperator starts from a cluster where the community aws-efs-operator's driver runs
// (DaemonSet efs-csi-node, CSIDriver, a SharedVolume with its PV and PVC) and where an older version of this
// operator left its node DaemonSet. Nothing changes until the ClusterCSIDriver exists; then the community
// DaemonSet is deleted, the old DaemonSet is updated in place, and the SharedVolume keeps its PV and PVC.
func TestTakeoverFromCommunityOperator(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for _, ns := range []string{"openshift-efs-csi", "team-b"} {
		ok(e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(t)
	}
	community := ok(e.kube.AppsV1().DaemonSets("openshift-efs-csi").Create(ctx,
		legacyDaemonSet("openshift-efs-csi", "efs-csi-node", "registry.hub.docker.com/amazon/aws-efs-csi-driver:latest"), metav1.CreateOptions{}))(t)
	older := ok(e.kube.AppsV1().DaemonSets(namespace).Create(ctx,
		legacyDaemonSet(namespace, "aws-efs-csi-driver-node", "quay.io/e2e/aws-efs-csi-driver:v1"), metav1.CreateOptions{}))(t)
	ok(e.kube.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: "efs.csi.aws.com"},
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}},
	}, metav1.CreateOptions{}))(t)

	// The community operator's SharedVolume, PV and PVC, as it left them.
	sv := sharedVolumeObject("team-b", "shared", "fs-0abc", "fsap-0def")
	sv.SetFinalizers([]string{sharedvolume.Finalizer})
	sv = ok(e.dyn.Resource(sharedvolume.GroupVersionResource).Namespace("team-b").Create(ctx, sv, metav1.CreateOptions{}))(t)
	_ = unstructured.SetNestedMap(sv.Object, map[string]any{"phase": "Ready", "claimRef": map[string]any{"kind": "PersistentVolumeClaim", "name": "pvc-shared"}}, "status")
	ok(e.dyn.Resource(sharedvolume.GroupVersionResource).Namespace("team-b").UpdateStatus(ctx, sv, metav1.UpdateOptions{}))(t)
	svTyped := &sharedvolume.SharedVolume{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "team-b"},
		Spec: sharedvolume.Spec{FileSystemID: "fs-0abc", AccessPointID: "fsap-0def"}}
	pv := ok(e.kube.CoreV1().PersistentVolumes().Create(ctx, sharedvolume.DesiredPV(svTyped), metav1.CreateOptions{}))(t)
	pvc := ok(e.kube.CoreV1().PersistentVolumeClaims("team-b").Create(ctx, sharedvolume.DesiredPVC(svTyped), metav1.CreateOptions{}))(t)

	op := e.startOperator(testConfig())
	e.waitSharedVolumeReady(t, "team-b", "shared")
	time.Sleep(5 * time.Second)
	if _, err := e.kube.AppsV1().DaemonSets("openshift-efs-csi").Get(ctx, "efs-csi-node", metav1.GetOptions{}); err != nil {
		t.Fatalf("community DaemonSet touched before the ClusterCSIDriver exists: %v", err)
	}
	if got := ok(e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{}))(t); got.Generation != older.Generation {
		t.Fatalf("older DaemonSet changed before the ClusterCSIDriver exists")
	}
	if op.missing.v.Load() != 1 {
		t.Errorf("missing gauge = %d, want 1", op.missing.v.Load())
	}

	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, 2*time.Minute, "community DaemonSet replaced and older DaemonSet updated in place", func(ctx context.Context) error {
		if _, err := e.kube.AppsV1().DaemonSets("openshift-efs-csi").Get(ctx, "efs-csi-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("community DaemonSet %s still exists (%v)", community.Name, err)
		}
		ds, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ds.UID != older.UID {
			return fmt.Errorf("node DaemonSet was recreated (UID %s, was %s), want an in-place update", ds.UID, older.UID)
		}
		spec := ds.Spec.Template.Spec
		if spec.DNSPolicy != corev1.DNSDefault || findContainer(spec.Containers, "csi-driver").Image != "quay.io/e2e/aws-efs-csi-driver:v2" ||
			findContainer(spec.Containers, "csi-node-driver-registrar").Image == "" {
			return fmt.Errorf("node DaemonSet not updated: dnsPolicy %q driver image %q", spec.DNSPolicy, findContainer(spec.Containers, "csi-driver").Image)
		}
		return nil
	})
	eventually(t, time.Minute, "driver objects installed", e.driverObjectsExist)
	csi := ok(e.kube.StorageV1().CSIDrivers().Get(ctx, "efs.csi.aws.com", metav1.GetOptions{}))(t)
	if *csi.Spec.AttachRequired || *csi.Spec.PodInfoOnMount {
		t.Errorf("adopted CSIDriver spec %+v", csi.Spec)
	}
	// The SharedVolume kept its volume and claim.
	if got := ok(e.kube.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}))(t); got.UID != pv.UID {
		t.Errorf("PV %s was recreated", pv.Name)
	}
	if got := ok(e.kube.CoreV1().PersistentVolumeClaims("team-b").Get(ctx, pvc.Name, metav1.GetOptions{}))(t); got.UID != pvc.UID {
		t.Errorf("PVC %s was recreated", pvc.Name)
	}
	e.waitSharedVolumeReady(t, "team-b", "shared")
}
