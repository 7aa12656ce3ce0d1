package takeover

import (
	"strings"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

const crName = "efs.csi.aws.com"

func communityDS(ns string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName, Namespace: ns, Labels: map[string]string{OwnedLabel: "true"}}}
}

func communityOperator(ns string, available int32, olm bool) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: DeploymentName, Namespace: ns}, Status: appsv1.DeploymentStatus{AvailableReplicas: available}}
	if olm {
		d.Labels = map[string]string{"olm.owner": "aws-efs-operator.v0.0.8", "olm.owner.namespace": ns}
	}
	return d
}

// listers returns DaemonSet and Deployment listers holding objs, and the fake clientset behind them.
func listers(t *testing.T, objs ...runtime.Object) (Inputs, *kubefake.Clientset) {
	t.Helper()
	kube := kubefake.NewClientset(objs...)
	inf := informers.NewSharedInformerFactory(kube, 0)
	dss, deps := inf.Apps().V1().DaemonSets(), inf.Apps().V1().Deployments()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *appsv1.DaemonSet:
			err = dss.Informer().GetIndexer().Add(o)
		case *appsv1.Deployment:
			err = deps.Informer().GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return Inputs{DaemonSets: dss.Lister(), DaemonSetsInformer: dss.Informer(), Deployments: deps.Lister(), DeploymentsInformer: deps.Informer()}, kube
}

func TestSync(t *testing.T) {
	now := metav1.Now()
	unrelated := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName, Namespace: "kube-system"}}
	ours := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "aws-efs-csi-driver-node", Namespace: "openshift-cluster-csi-drivers"}}
	tests := []struct {
		name        string
		state       opv1.ManagementState
		deleting    bool
		operator    *appsv1.Deployment
		wantDeleted bool
		wantErr     string
	}{
		{name: "managed, operator uninstalled", state: opv1.Managed, wantDeleted: true},
		{name: "managed, operator Deployment with no available replica", state: opv1.Managed, operator: communityOperator("openshift-operators", 0, true), wantDeleted: true},
		{name: "managed, operator running under OLM", state: opv1.Managed, operator: communityOperator("openshift-operators", 1, true),
			wantErr: "oc delete subscription,clusterserviceversion -n openshift-operators -l operators.coreos.com/aws-efs-operator.openshift-operators"},
		{name: "managed, operator running without OLM", state: opv1.Managed, operator: communityOperator("openshift-operators", 1, false),
			wantErr: "oc delete deployment -n openshift-operators aws-efs-operator"},
		{name: "unmanaged", state: opv1.Unmanaged},
		{name: "removed", state: opv1.Removed},
		{name: "being deleted", state: opv1.Managed, deleting: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := []runtime.Object{communityDS("openshift-operators"), unrelated, ours}
			if tc.operator != nil {
				objs = append(objs, tc.operator)
			}
			in, kube := listers(t, objs...)
			meta := &metav1.ObjectMeta{Name: crName}
			if tc.deleting {
				meta.DeletionTimestamp = &now
			}
			opClient := v1helpers.NewFakeOperatorClientWithObjectMeta(meta, &opv1.OperatorSpec{ManagementState: tc.state}, &opv1.OperatorStatus{}, nil)
			c := &controller{operatorClient: opClient, kube: kube, in: in}
			rec := events.NewInMemoryRecorder("test", clock.RealClock{})
			err := c.sync(t.Context(), factory.NewSyncContext("test", rec))
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "uninstall")) {
				t.Fatalf("sync error = %v, want one containing %q", err, tc.wantErr)
			}
			_, err = kube.AppsV1().DaemonSets("openshift-operators").Get(t.Context(), DaemonSetName, metav1.GetOptions{})
			if deleted := apierrors.IsNotFound(err); deleted != tc.wantDeleted {
				t.Fatalf("community DaemonSet deleted = %v, want %v (err %v)", deleted, tc.wantDeleted, err)
			}
			for _, ds := range []*appsv1.DaemonSet{unrelated, ours} {
				if _, err := kube.AppsV1().DaemonSets(ds.Namespace).Get(t.Context(), ds.Name, metav1.GetOptions{}); err != nil {
					t.Fatalf("DaemonSet %s/%s that is not the community operator's: %v", ds.Namespace, ds.Name, err)
				}
			}
			if tc.wantDeleted && len(rec.Events()) != 1 {
				t.Fatalf("events = %v, want one CommunityDriverReplaced", rec.Events())
			}
		})
	}
}

func TestIsCommunityDaemonSet(t *testing.T) {
	tests := []struct {
		name string
		ds   *appsv1.DaemonSet
		want bool
	}{
		{name: "community", ds: communityDS("openshift-operators"), want: true},
		{name: "same name, no label (upstream install)", ds: &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName, Namespace: "kube-system"}}},
		{name: "label false", ds: &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName, Labels: map[string]string{OwnedLabel: "false"}}}},
		{name: "other name with the label", ds: &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{OwnedLabel: "true"}}}},
	}
	for _, tc := range tests {
		if got := IsCommunityDaemonSet(tc.ds); got != tc.want {
			t.Errorf("%s: IsCommunityDaemonSet = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHoldBackHook(t *testing.T) {
	now := metav1.Now()
	managed := &opv1.OperatorSpec{ManagementState: opv1.Managed}
	tests := []struct {
		name     string
		spec     *opv1.OperatorSpec
		deleting bool
		noCR     bool
		objs     []runtime.Object
		pods     []*corev1.Pod
		wantErr  string
	}{
		{name: "no community DaemonSet", spec: managed},
		{name: "only an unrelated efs-csi-node", spec: managed, objs: []runtime.Object{&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName, Namespace: "kube-system"}}}},
		{name: "community DaemonSet, Managed", spec: managed, objs: []runtime.Object{communityDS("openshift-operators")}, wantErr: "openshift-operators/efs-csi-node"},
		{name: "community DaemonSet, Removed", spec: &opv1.OperatorSpec{ManagementState: opv1.Removed}, objs: []runtime.Object{communityDS("openshift-operators")}},
		{name: "community DaemonSet, being deleted", spec: managed, deleting: true, objs: []runtime.Object{communityDS("openshift-operators")}},
		{name: "community DaemonSet, ClusterCSIDriver gone", spec: managed, noCR: true, objs: []runtime.Object{communityDS("openshift-operators")}},
		{name: "community DaemonSet deleted, its pod still terminating", spec: managed,
			pods: []*corev1.Pod{nodePod("openshift-operators", "efs-csi-node-x1", "uid-community", corev1.PodRunning)}, wantErr: "openshift-operators/efs-csi-node-x1 on node \"worker-1\""},
		{name: "community DaemonSet deleted, its pod finished", spec: managed,
			pods: []*corev1.Pod{nodePod("openshift-operators", "efs-csi-node-x1", "uid-community", corev1.PodSucceeded)}},
		{name: "community pod a minute past its deletion deadline (lost node)", spec: managed,
			pods: []*corev1.Pod{deletedAgo(nodePod("openshift-operators", "efs-csi-node-x1", "uid-community", corev1.PodRunning), 2*time.Minute)}},
		{name: "community pod within its grace period", spec: managed,
			pods: []*corev1.Pod{deletedAgo(nodePod("openshift-operators", "efs-csi-node-x1", "uid-community", corev1.PodRunning), -20*time.Second)}, wantErr: "efs-csi-node-x1"},
		{name: "pod of an unrelated efs-csi-node", spec: managed,
			objs: []runtime.Object{&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName, Namespace: "kube-system", UID: "uid-upstream"}}},
			pods: []*corev1.Pod{nodePod("kube-system", "efs-csi-node-u1", "uid-upstream", corev1.PodRunning)}},
		{name: "community pod, Removed", spec: &opv1.OperatorSpec{ManagementState: opv1.Removed},
			pods: []*corev1.Pod{nodePod("openshift-operators", "efs-csi-node-x1", "uid-community", corev1.PodRunning)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := listers(t, tc.objs...)
			ops := operatorinformers.NewSharedInformerFactory(operatorfake.NewClientset(), 0)
			if !tc.noCR {
				cr := &opv1.ClusterCSIDriver{ObjectMeta: metav1.ObjectMeta{Name: crName}}
				if tc.deleting {
					cr.DeletionTimestamp = &now
				}
				if err := ops.Operator().V1().ClusterCSIDrivers().Informer().GetIndexer().Add(cr); err != nil {
					t.Fatal(err)
				}
			}
			pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			for _, p := range tc.pods {
				if err := pods.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			hook := HoldBackHook(in.DaemonSets, corelisters.NewPodLister(pods), ops.Operator().V1().ClusterCSIDrivers().Lister(), crName)
			err := hook(tc.spec, &appsv1.DaemonSet{})
			if tc.wantErr == "" && err != nil {
				t.Fatalf("hook = %v, want nil", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("hook = %v, want an error naming %q", err, tc.wantErr)
			}
		})
	}
}

// nodePod is a pod of an efs-csi-node DaemonSet with UID ownerUID, on node worker-1.
func nodePod(ns, name, ownerUID string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{PodLabel: DaemonSetName},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: DaemonSetName, UID: types.UID(ownerUID), Controller: ptr.To(true)}}},
		Spec:   corev1.PodSpec{NodeName: "worker-1"},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// deletedAgo marks p deleted with its deletion deadline ago in the past (negative: still ahead).
func deletedAgo(p *corev1.Pod, ago time.Duration) *corev1.Pod {
	ts := metav1.NewTime(time.Now().Add(-ago))
	p.DeletionTimestamp = &ts
	return p
}
