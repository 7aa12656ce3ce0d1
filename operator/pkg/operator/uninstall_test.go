package operator

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// The uninstaller waits for the pods of the driver's ServiceAccounts, terminating ones included, but not for a pod
// stuck well past its deletion deadline (its node is gone) nor for other pods of the namespace.
func TestUninstallWaitsForTheDriversPods(t *testing.T) {
	const ns = "openshift-cluster-csi-drivers"
	pod := func(name, sa string, deleted time.Duration) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{ServiceAccountName: sa}}
		if deleted > 0 {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now().Add(-deleted)}
		}
		return p
	}
	pods := informers.NewSharedInformerFactoryWithOptions(fake.NewClientset(), 0, informers.WithNamespace(ns)).Core().V1().Pods()
	for _, p := range []*corev1.Pod{
		pod("controller-running", "aws-efs-csi-driver-controller-sa", 0),
		pod("node-terminating", "aws-efs-csi-driver-node-sa", 10*time.Second),
		pod("node-on-a-lost-node", "aws-efs-csi-driver-node-sa", stuckPodGrace+time.Minute),
		pod("ebs-controller", "aws-ebs-csi-driver-controller-sa", 0),
	} {
		if err := pods.Informer().GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	u := &uninstaller{pods: pods, namespace: ns, serviceAccounts: []string{"aws-efs-csi-driver-controller-sa", "aws-efs-csi-driver-node-sa"}}
	got, err := u.runningPods()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"controller-running", "node-terminating"}; !slices.Equal(got, want) {
		t.Fatalf("runningPods = %v, want %v", got, want)
	}
}
