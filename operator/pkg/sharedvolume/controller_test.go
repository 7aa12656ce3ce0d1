package sharedvolume

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

// TestEnsureObjectsReadsTheLiveObjectOnAlreadyExists: the listers have not seen the PV and PVC yet (informer lag),
// the API server has them. Creating answers AlreadyExists; the controller must read them and carry on, not report
// a conflict (a false Failed phase). Objects that are someone else's still are a conflict.
func TestEnsureObjectsReadsTheLiveObjectOnAlreadyExists(t *testing.T) {
	sv := &SharedVolume{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "team-b"}, Spec: Spec{FileSystemID: "fs-0abc", AccessPointID: "fsap-0def"}}
	other := &SharedVolume{ObjectMeta: metav1.ObjectMeta{Name: "b-shared", Namespace: "team"}, Spec: sv.Spec} // same PV name, pv-team-b-shared
	foreignPVC := DesiredPVC(sv)
	foreignPVC.Labels = nil
	tests := []struct {
		name    string
		live    []runtime.Object
		wantErr string
	}{
		{name: "ours, not yet in the listers", live: []runtime.Object{DesiredPV(sv), DesiredPVC(sv)}},
		{name: "PV of another SharedVolume with the same name", live: []runtime.Object{DesiredPV(other)}, wantErr: "PersistentVolume pv-team-b-shared exists and does not belong"},
		{name: "claim without our labels", live: []runtime.Object{DesiredPV(sv), foreignPVC}, wantErr: "PersistentVolumeClaim team-b/pvc-shared exists and does not belong"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewClientset(tc.live...)
			inf := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0) // empty: the informers lag
			c := &Controller{c: Clients{Kube: kube, PVs: inf.Core().V1().PersistentVolumes().Lister(),
				PVCs: inf.Core().V1().PersistentVolumeClaims().Lister(), Events: record.NewFakeRecorder(10),
				Grants: grantsOf(t, map[string]string{"*": "fs-0abc"})}}
			err := c.ensureObjects(t.Context(), sv)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ensureObjects = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ensureObjects = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
