package sharedvolume

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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

// TestEnsureObjectsKeepsWhatExistedBeforeGrants: a SharedVolume whose own PV exists already (the community
// operator made it before the takeover) needs no grant and stays Ready; the same SharedVolume without its PV, or
// with a PV that serves another access point, is refused until the cluster admin grants it.
func TestEnsureObjectsKeepsWhatExistedBeforeGrants(t *testing.T) {
	sv := &SharedVolume{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "team-c"}, Spec: Spec{FileSystemID: "fs-0abc", AccessPointID: "fsap-0def"}}
	moved := &SharedVolume{ObjectMeta: sv.ObjectMeta, Spec: Spec{FileSystemID: "fs-0abc", AccessPointID: "fsap-0999"}}
	tests := []struct {
		name    string
		listed  []runtime.Object // what the listers have seen
		wantErr string
	}{
		{name: "its PV and claim exist", listed: []runtime.Object{DesiredPV(sv), DesiredPVC(sv)}},
		{name: "nothing exists", wantErr: "is not granted to namespace team-c"},
		{name: "a PV of the same name serves another access point", listed: []runtime.Object{DesiredPV(moved)}, wantErr: "is not granted to namespace team-c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			listed := kubefake.NewClientset(tc.listed...)
			inf := informers.NewSharedInformerFactory(listed, 0)
			pvs, pvcs := inf.Core().V1().PersistentVolumes(), inf.Core().V1().PersistentVolumeClaims()
			for _, o := range tc.listed {
				var err error
				if pv, ok := o.(*corev1.PersistentVolume); ok {
					err = pvs.Informer().GetIndexer().Add(pv)
				} else {
					err = pvcs.Informer().GetIndexer().Add(o)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			c := &Controller{c: Clients{Kube: kubefake.NewClientset(tc.listed...), PVs: pvs.Lister(), PVCs: pvcs.Lister(),
				Events: record.NewFakeRecorder(10), Grants: grantsOf(t, nil)}}
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
