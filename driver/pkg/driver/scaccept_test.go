package driver

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// TestStorageClassesUpstreamAccepts (issue 26 item 6): StorageClasses are immutable, so every class upstream v3.4.1
// accepts must work here too, or a switch means recreating them. Upstream's rules
// (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9):
//   - pkg/driver/filesystem_id_finder.go findFileSystemId/validateFileSystemIdRefs trim fileSystemId and the refs,
//     and count an empty (or blank) one as not given;
//   - pkg/driver/controller.go CreateVolume reads az only for a cross-account request (awsRoleArn), so on any other
//     class its value is never looked at;
//   - directoryPerms is only copied into CreateAccessPoint's CreationInfo: a reuseAccessPoint class that finds its
//     access point never needs it.
func TestStorageClassesUpstreamAccepts(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.ctrl.cfg.Resolver = refs{fmt.Sprint(false, "kube-system", "efs", "fsid"): e.fsID}
	without := func(m map[string]string, k string) map[string]string { delete(m, k); return m }
	reused := e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, ClientToken: scparams.UpstreamToken("kept"),
		PosixUser:     &fakeaws.PosixUser{Uid: 50100, Gid: 50100},
		RootDirectory: fakeaws.RootDirectory{Path: "/pvc-old", CreationInfo: &fakeaws.CreationInfo{OwnerUid: 50100, OwnerGid: 50100, Permissions: "750"}}})
	tests := []struct {
		name   string
		params map[string]string
		wantAP string // "" any new access point
	}{
		{"fileSystemId padded", e.params("fileSystemId", "  "+e.fsID+"\n"), ""},
		{"fileSystemId empty beside a ConfigMap ref", e.params("fileSystemId", "", "fileSystemIdConfigRef", "kube-system/efs/fsid"), ""},
		{"fileSystemId blank beside a ConfigMap ref", e.params("fileSystemId", " ", "fileSystemIdConfigRef", "kube-system/efs/fsid"), ""},
		{"empty secret ref beside fileSystemId", e.params("fileSystemIdSecretRef", ""), ""},
		{"az on a class that is not cross-account", e.params("az", "Zone A"), ""},
		{"az empty", e.params("az", ""), ""},
		{"directoryPerms absent, access point reused", without(e.params("reuseAccessPoint", "true", scparams.ParamPVCName, "kept"), "directoryPerms"), reused},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vol, err := e.create(t, fmt.Sprintf("pvc-accept-%d", i), tt.params)
			if err != nil {
				t.Fatalf("CreateVolume: %v; upstream accepts this StorageClass", err)
			}
			h, _ := volume.ParseHandle(vol.GetVolumeId())
			if h.FileSystemID != e.fsID || (tt.wantAP != "" && h.AccessPointID != tt.wantAP) {
				t.Errorf("volume %s, want file system %s and access point %q", vol.GetVolumeId(), e.fsID, tt.wantAP)
			}
		})
	}
	// Without an access point to reuse, one must be created, and that needs directoryPerms: the error says so.
	_, err := e.create(t, "pvc-accept-new", without(e.params("reuseAccessPoint", "true", scparams.ParamPVCName, "new"), "directoryPerms"))
	wantCode(t, err, codes.InvalidArgument, "directoryPerms", "octal")
	// A cross-account class still has its az checked: there it chooses the mount target.
	const role = "arn:aws:iam::210987654321:role/efs-owner"
	e.aws.AddRole(role, "")
	_, err = e.client.CreateVolume(t.Context(), createReq("pvc-accept-ca", e.params("az", "Zone A"), map[string]string{"awsRoleArn": role}))
	wantCode(t, err, codes.InvalidArgument, "az", `"Zone A"`)
}
