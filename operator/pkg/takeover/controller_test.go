package takeover

import (
	"testing"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
)

func TestSyncDeletesOnlyCommunityDaemonSetsWhenManaged(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name        string
		state       opv1.ManagementState
		deleting    bool
		wantDeleted bool
	}{
		{name: "managed", state: opv1.Managed, wantDeleted: true},
		{name: "unmanaged", state: opv1.Unmanaged},
		{name: "removed", state: opv1.Removed},
		{name: "being deleted", state: opv1.Managed, deleting: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			community := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "efs-csi-node", Namespace: "openshift-efs-csi"}}
			ours := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "aws-efs-csi-driver-node", Namespace: "ns"}}
			kube := kubefake.NewClientset(community, ours)
			inf := informers.NewSharedInformerFactory(kube, 0)
			lister := inf.Apps().V1().DaemonSets()
			for _, ds := range []*appsv1.DaemonSet{community, ours} {
				if err := lister.Informer().GetIndexer().Add(ds); err != nil {
					t.Fatal(err)
				}
			}
			meta := &metav1.ObjectMeta{Name: "efs.csi.aws.com"}
			if tc.deleting {
				meta.DeletionTimestamp = &now
			}
			opClient := v1helpers.NewFakeOperatorClientWithObjectMeta(meta, &opv1.OperatorSpec{ManagementState: tc.state}, &opv1.OperatorStatus{}, nil)
			c := &controller{operatorClient: opClient, kube: kube, legacy: lister.Lister()}
			rec := events.NewInMemoryRecorder("test", clock.RealClock{})
			if err := c.sync(t.Context(), factory.NewSyncContext("test", rec)); err != nil {
				t.Fatal(err)
			}
			_, err := kube.AppsV1().DaemonSets("openshift-efs-csi").Get(t.Context(), "efs-csi-node", metav1.GetOptions{})
			if deleted := apierrors.IsNotFound(err); deleted != tc.wantDeleted {
				t.Fatalf("community DaemonSet deleted = %v, want %v (err %v)", deleted, tc.wantDeleted, err)
			}
			if _, err := kube.AppsV1().DaemonSets("ns").Get(t.Context(), "aws-efs-csi-driver-node", metav1.GetOptions{}); err != nil {
				t.Fatalf("our DaemonSet: %v", err)
			}
			if tc.wantDeleted && len(rec.Events()) != 1 {
				t.Fatalf("events = %v, want one CommunityDriverReplaced", rec.Events())
			}
		})
	}
}
