package adoption

import (
	"reflect"
	"slices"
	"testing"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

const own = FinalizerPrefix + "AWSEFSDriverControllerServiceController"

func TestForeignFinalizers(t *testing.T) {
	got := ForeignFinalizers([]string{own, FinalizerPrefix + "CSIStaticResourceController", "kubernetes.io/other", "someone.operator.openshift.io/x"}, []string{own})
	if want := []string{FinalizerPrefix + "CSIStaticResourceController"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ForeignFinalizers = %v, want %v", got, want)
	}
}

func TestSync(t *testing.T) {
	cond := func(t string) opv1.OperatorCondition {
		return opv1.OperatorCondition{Type: t, Status: opv1.ConditionFalse}
	}
	tests := []struct {
		name           string
		conditions     []opv1.OperatorCondition
		wantConditions []string
	}{
		{name: "foreign conditions go once ours are reported",
			conditions:     []opv1.OperatorCondition{cond("AWSEFSDriverStaticResourcesControllerDegraded"), cond("AWSEFSDriverGuestStaticResourcesControllerDegraded"), cond("AWSEFSDriverControlPlaneStaticResourcesControllerDegraded"), cond("ManagementStateDegraded")},
			wantConditions: []string{"AWSEFSDriverStaticResourcesControllerDegraded", "ManagementStateDegraded"}},
		{name: "kept until ours are reported",
			conditions:     []opv1.OperatorCondition{cond("CSIStaticResourceControllerDegraded")},
			wantConditions: []string{"CSIStaticResourceControllerDegraded"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := v1helpers.NewFakeOperatorClientWithObjectMeta(
				&metav1.ObjectMeta{Name: "efs.csi.aws.com", Finalizers: []string{own, FinalizerPrefix + "CSIStaticResourceController"}},
				&opv1.OperatorSpec{ManagementState: opv1.Managed}, &opv1.OperatorStatus{Conditions: tc.conditions}, nil)
			c := &controller{in: Inputs{OperatorClient: client, OwnFinalizers: []string{own}, OwnCondition: "AWSEFSDriverStaticResourcesControllerDegraded"}}
			if err := c.sync(t.Context(), factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))); err != nil {
				t.Fatal(err)
			}
			meta, _ := client.GetObjectMeta()
			if !reflect.DeepEqual(meta.Finalizers, []string{own}) {
				t.Fatalf("finalizers %v, want only ours", meta.Finalizers)
			}
			_, status, _, _ := client.GetOperatorState()
			var got []string
			for _, c := range status.Conditions {
				got = append(got, c.Type)
			}
			slices.Sort(got)
			if !reflect.DeepEqual(got, tc.wantConditions) {
				t.Fatalf("conditions %v, want %v", got, tc.wantConditions)
			}
		})
	}
}
