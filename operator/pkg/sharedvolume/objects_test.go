package sharedvolume

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{name: "valid", spec: Spec{FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123abcd"}},
		{name: "upper-case fs", spec: Spec{FileSystemID: "fs-ABC", AccessPointID: "fsap-1"}, wantErr: `spec.fileSystemID "fs-ABC": want fs-`},
		{name: "ap in fs field", spec: Spec{FileSystemID: "fsap-1", AccessPointID: "fsap-1"}, wantErr: "spec.fileSystemID"},
		{name: "missing ap", spec: Spec{FileSystemID: "fs-1"}, wantErr: `spec.accessPointID "": want fsap-`},
		{name: "ap with path", spec: Spec{FileSystemID: "fs-1", AccessPointID: "fsap-1/x"}, wantErr: "spec.accessPointID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func FuzzSpecValidate(f *testing.F) {
	f.Add("fs-0123abcd", "fsap-0123abcd")
	f.Add("fs-", "fsap-")
	f.Fuzz(func(t *testing.T, fsID, apID string) {
		s := Spec{FileSystemID: fsID, AccessPointID: apID}
		if s.Validate() != nil {
			return
		}
		// A valid spec always gives a handle the driver splits back into the same two IDs.
		parts := strings.Split(s.VolumeHandle(), "::")
		if len(parts) != 2 || parts[0] != fsID || parts[1] != apID {
			t.Fatalf("handle %q does not round-trip", s.VolumeHandle())
		}
	})
}

func TestDesiredObjects(t *testing.T) {
	sv := &SharedVolume{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "team-a"},
		Spec: Spec{FileSystemID: "fs-1", AccessPointID: "fsap-2"}}
	pv := DesiredPV(sv)
	if pv.Name != "pv-team-a-data" || pv.Spec.CSI.VolumeHandle != "fs-1::fsap-2" || pv.Spec.CSI.Driver != "efs.csi.aws.com" {
		t.Fatalf("PV = %s %+v", pv.Name, pv.Spec.CSI)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Spec.StorageClassName != "efs-sc" {
		t.Fatalf("PV reclaim %q class %q, want Retain efs-sc", pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.StorageClassName)
	}
	pvc := DesiredPVC(sv)
	if pvc.Name != "pvc-data" || pvc.Namespace != "team-a" || pvc.Spec.VolumeName != pv.Name || *pvc.Spec.StorageClassName != "efs-sc" {
		t.Fatalf("PVC = %s/%s volumeName %q", pvc.Namespace, pvc.Name, pvc.Spec.VolumeName)
	}
	if got := ownerKey(pvc); len(got) != 1 || got[0] != "team-a/data" {
		t.Fatalf("ownerKey(PVC) = %v", got)
	}
	if got := ownerKey(&corev1.PersistentVolume{}); got != nil {
		t.Fatalf("ownerKey of an unlabelled PV = %v", got)
	}
}

func TestHandleOfLegacyPV(t *testing.T) {
	pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
		MountOptions:           []string{"tls", "accesspoint=fsap-9"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{VolumeHandle: "fs-1"}},
	}}
	if got := handleOf(pv); got != "fs-1::fsap-9" {
		t.Fatalf("handleOf(legacy) = %q", got)
	}
	pv.Spec.CSI.VolumeHandle = "fs-1::fsap-2"
	if got := handleOf(pv); got != "fs-1::fsap-2" {
		t.Fatalf("handleOf = %q", got)
	}
}
