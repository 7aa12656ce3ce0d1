package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/openshift/aws-efs-csi/operator/pkg/sharedvolume"
	"github.com/openshift/aws-efs-csi/operator/pkg/takeover"
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

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// communityDaemonSet is the community aws-efs-operator's node DaemonSet: efs-csi-node with its ownership label.
func communityDaemonSet(ns string) *appsv1.DaemonSet {
	ds := legacyDaemonSet(ns, "efs-csi-node", "registry.hub.docker.com/amazon/aws-efs-csi-driver:latest")
	ds.Labels = map[string]string{takeover.OwnedLabel: "true"}
	return ds
}

// TestTakeoverFromCommunityOperator starts from a cluster where the community aws-efs-operator's driver runs
// (DaemonSet efs-csi-node, CSIDriver, a SharedVolume with its PV and PVC) after the operator itself was
// uninstalled, where an older version of this operator left its node DaemonSet, and where an unrelated DaemonSet
// named efs-csi-node (an upstream install, without the community operator's label) runs in kube-system. Nothing
// changes until the ClusterCSIDriver exists; then the community DaemonSet is deleted, the old DaemonSet is updated
// in place, the unrelated one is left alone, and the SharedVolume keeps its PV and PVC.
func TestTakeoverFromCommunityOperator(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for _, ns := range []string{"openshift-operators", "team-b"} {
		ok(e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(t)
	}
	community := ok(e.kube.AppsV1().DaemonSets("openshift-operators").Create(ctx, communityDaemonSet("openshift-operators"), metav1.CreateOptions{}))(t)
	unrelated := ok(e.kube.AppsV1().DaemonSets("kube-system").Create(ctx,
		legacyDaemonSet("kube-system", "efs-csi-node", "public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver:v3.4.1"), metav1.CreateOptions{}))(t)
	older := ok(e.kube.AppsV1().DaemonSets(namespace).Create(ctx,
		legacyDaemonSet(namespace, "aws-efs-csi-driver-node", "quay.io/e2e/aws-efs-csi-driver:v1"), metav1.CreateOptions{}))(t)
	// The community operator's CSIDriver is owned by its SharedVolume CRD.
	crd := ok(e.dyn.Resource(crdGVR).Get(ctx, "sharedvolumes.aws-efs.managed.openshift.io", metav1.GetOptions{}))(t)
	csiDriver := ok(e.kube.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: "efs.csi.aws.com", Labels: map[string]string{takeover.OwnedLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.GetName(), UID: crd.GetUID()}}},
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

	e.grantSharedVolumes(t, map[string]string{"team-b": "fs-0abc::fsap-0def"})
	op := e.startOperator(testConfig())
	e.waitSharedVolumeReady(t, "team-b", "shared")
	time.Sleep(5 * time.Second)
	if _, err := e.kube.AppsV1().DaemonSets("openshift-operators").Get(ctx, "efs-csi-node", metav1.GetOptions{}); err != nil {
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
		if _, err := e.kube.AppsV1().DaemonSets("openshift-operators").Get(ctx, "efs-csi-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
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
	// The CSIDriver is adopted in place (same object, no delete and recreate under mounted volumes) and no longer
	// owned by the SharedVolume CRD, so deleting that CRD cannot garbage-collect it.
	eventually(t, time.Minute, "CSIDriver adopted in place", func(ctx context.Context) error {
		csi, err := e.kube.StorageV1().CSIDrivers().Get(ctx, "efs.csi.aws.com", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if csi.UID != csiDriver.UID {
			return fmt.Errorf("CSIDriver recreated (UID %s, was %s)", csi.UID, csiDriver.UID)
		}
		if len(csi.OwnerReferences) != 0 || *csi.Spec.AttachRequired || *csi.Spec.PodInfoOnMount {
			return fmt.Errorf("adopted CSIDriver owner references %v spec %+v", csi.OwnerReferences, csi.Spec)
		}
		return nil
	})
	// The SharedVolume kept its volume and claim.
	if got := ok(e.kube.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}))(t); got.UID != pv.UID {
		t.Errorf("PV %s was recreated", pv.Name)
	}
	if got := ok(e.kube.CoreV1().PersistentVolumeClaims("team-b").Get(ctx, pvc.Name, metav1.GetOptions{}))(t); got.UID != pvc.UID {
		t.Errorf("PVC %s was recreated", pvc.Name)
	}
	e.waitSharedVolumeReady(t, "team-b", "shared")
	if got, err := e.kube.AppsV1().DaemonSets("kube-system").Get(ctx, "efs-csi-node", metav1.GetOptions{}); err != nil || got.UID != unrelated.UID || got.Generation != unrelated.Generation {
		t.Fatalf("unrelated DaemonSet kube-system/efs-csi-node touched: %v", err)
	}
}

// TestCommunityOperatorStillRunning: while the community operator's own Deployment is available, the takeover does
// not delete its DaemonSet (the operator would recreate it at once) and tells the admin how to uninstall it; the
// hold-back of our node DaemonSet never blocks Removed or the deletion of the ClusterCSIDriver.
func TestCommunityOperatorStillRunning(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	const ns = "openshift-operators"
	ok(e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(t)
	community := ok(e.kube.AppsV1().DaemonSets(ns).Create(ctx, communityDaemonSet(ns), metav1.CreateOptions{}))(t)
	labels := map[string]string{"name": "aws-efs-operator"}
	dep := ok(e.kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "aws-efs-operator", Namespace: ns, Labels: map[string]string{"olm.owner": "aws-efs-operator.v0.0.8", "olm.owner.namespace": ns}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "aws-efs-operator", Image: "quay.io/app-sre/aws-efs-operator:v0.0.8"}}},
		}},
	}, metav1.CreateOptions{}))(t)
	// No controller-manager runs here: report the Deployment available as it would be.
	dep.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1, ObservedGeneration: dep.Generation}
	ok(e.kube.AppsV1().Deployments(ns).UpdateStatus(ctx, dep, metav1.UpdateOptions{}))(t)

	e.startOperator(testConfig())
	e.createClusterCSIDriver(opv1.Managed)
	const command = "oc delete subscription,clusterserviceversion -n openshift-operators -l operators.coreos.com/aws-efs-operator.openshift-operators"
	eventually(t, 2*time.Minute, "the takeover reports the running community operator with the uninstall command", func(ctx context.Context) error {
		c, err := e.condition(ctx, "AWSEFSCommunityDriverTakeoverControllerDegraded")
		if err != nil {
			return err
		}
		if c.Status != opv1.ConditionTrue || !strings.Contains(c.Message, command) {
			return fmt.Errorf("takeover Degraded = %s %q", c.Status, c.Message)
		}
		c, err = e.condition(ctx, "AWSEFSDriverNodeServiceControllerDegraded")
		if err != nil {
			return err
		}
		if !strings.Contains(c.Message, "openshift-operators/efs-csi-node") {
			return fmt.Errorf("node Degraded = %s %q, want the hold-back naming the community DaemonSet", c.Status, c.Message)
		}
		return nil
	})
	if got := ok(e.kube.AppsV1().DaemonSets(ns).Get(ctx, "efs-csi-node", metav1.GetOptions{}))(t); got.UID != community.UID {
		t.Fatal("community DaemonSet replaced while its operator runs")
	}
	if _, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("our node DaemonSet exists beside the community one: %v", err)
	}

	// Removed completes: the node controller deletes (nothing) and lets its finalizer go.
	e.setManagementState(t, opv1.Removed)
	eventually(t, time.Minute, "Removed completes", func(ctx context.Context) error {
		cr, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, crName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, f := range cr.Finalizers {
			if strings.HasSuffix(f, "/AWSEFSDriverNodeServiceController") || strings.HasSuffix(f, "/AWSEFSDriverControllerServiceController") {
				return fmt.Errorf("finalizer %s still there", f)
			}
		}
		if _, err := e.kube.AppsV1().Deployments(namespace).Get(ctx, "aws-efs-csi-driver-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("controller Deployment: %v", err)
		}
		return nil
	})

	// Managed again, then deleting the ClusterCSIDriver completes too.
	e.setManagementState(t, opv1.Managed)
	eventually(t, time.Minute, "Managed again", func(ctx context.Context) error {
		_, err := e.kube.AppsV1().Deployments(namespace).Get(ctx, "aws-efs-csi-driver-controller", metav1.GetOptions{})
		return err
	})
	e.deleteClusterCSIDriver()
	if got := ok(e.kube.AppsV1().DaemonSets(ns).Get(ctx, "efs-csi-node", metav1.GetOptions{}))(t); got.UID != community.UID {
		t.Fatal("community DaemonSet deleted while its operator runs")
	}
}

// TestTakeoverWaitsForCommunityPods: the takeover deletes the community node DaemonSet with background
// propagation, so its pods outlive it (here a pod held in Terminating, as a pod bound to a node is until its
// kubelet removes it, and by a finalizer; this control plane runs no garbage collector and no kubelet). Our node DaemonSet, which registers the same kubelet plugin socket,
// is not created until the last of those pods is gone, and the node controller's Degraded message names the pod.
func TestTakeoverWaitsForCommunityPods(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	const ns, hold = "openshift-operators", "e2e.aws-efs-csi/hold"
	ok(e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(t)
	// The ServiceAccount admission wants the pod's ServiceAccount; no controller-manager makes it here.
	ok(e.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}))(t)
	community := ok(e.kube.AppsV1().DaemonSets(ns).Create(ctx, communityDaemonSet(ns), metav1.CreateOptions{}))(t)
	pod := ok(e.kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "efs-csi-node-x1", Namespace: ns, Labels: map[string]string{"app": "efs-csi-node"}, Finalizers: []string{hold},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: community.Name, UID: community.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{{Name: "efs-plugin", Image: "registry.hub.docker.com/amazon/aws-efs-csi-driver:778131e"}}},
	}, metav1.CreateOptions{}))(t)
	t.Cleanup(func() {
		_, _ = e.kube.CoreV1().Pods(ns).Patch(context.Background(), pod.Name, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})

	e.startOperator(testConfig())
	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, 2*time.Minute, "community DaemonSet deleted", func(ctx context.Context) error {
		if _, err := e.kube.AppsV1().DaemonSets(ns).Get(ctx, community.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	// The garbage collector's work: the pod is deleted and terminates.
	if err := e.kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "node controller waiting for the community pod", func(ctx context.Context) error {
		c, err := e.condition(ctx, "AWSEFSDriverNodeServiceControllerDegraded")
		if err != nil {
			return err
		}
		if !strings.Contains(c.Message, ns+"/"+pod.Name) {
			return fmt.Errorf("Degraded %s %q does not name the pod", c.Status, c.Message)
		}
		return nil
	})
	deadline := time.Now().Add(resync + 5*time.Second)
	for time.Now().Before(deadline) {
		if _, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("node DaemonSet created while a community pod still runs (%v)", err)
		}
		time.Sleep(time.Second)
	}
	// The pod's containers stopped: the kubelet removes it (a pod bound to a node stays Terminating until its
	// kubelet deletes it with grace period 0; there is no kubelet here), and our node DaemonSet follows.
	ok(e.kube.CoreV1().Pods(ns).Patch(ctx, pod.Name, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}))(t)
	if err := e.kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "node DaemonSet created once the community pod is gone", func(ctx context.Context) error {
		_, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{})
		return err
	})
	e.deleteClusterCSIDriver()
}
