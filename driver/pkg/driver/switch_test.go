package driver

import (
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
	"github.com/openshift/aws-efs-csi/driver/test/upstreamwriter"
)

// TestCreateVolumeInFlightAcrossTheSwitch (issue 26 item 1): the upstream driver created the access point of a
// claim, then was replaced before the PV was written; csi-provisioner retries CreateVolume with the same volume
// name against this driver. Upstream's client token is the volume name, and with subPathPattern and
// ensureUniqueDirectory its directory ends in a random UUID (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9
// pkg/driver/controller.go CreateVolume). The retry adopts that access point after the checks upstream's own retry
// makes (validateExistingAccessPoint: root under basePath, a POSIX user, uid/gid as fixed or inside the range), so
// the claim binds and nothing is orphaned.
func TestCreateVolumeInFlightAcrossTheSwitch(t *testing.T) {
	e := newEnv(t, envOpts{})
	up := upstreamwriter.New(e.aws.URL())
	tests := []struct {
		name   string
		params map[string]string
	}{
		{"pattern, unique directory", e.params("basePath", "/dynamic", "subPathPattern", "${.PVC.namespace}/${.PVC.name}")},
		{"pattern, ensureUniqueDirectory not a boolean", e.params("subPathPattern", "${.PV.name}", "ensureUniqueDirectory", "yes")},
		{"pattern, not unique", e.params("subPathPattern", "${.PVC.name}", "ensureUniqueDirectory", "false", scparams.ParamPVCName, "c3")},
		{"no pattern", e.params("basePath", "/b")},
		{"fixed uid and gid, tagging off", e.params("uid", "1000", "gid", "1000", "subPathPattern", "x", "enableTagging", "false")},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "pvc-inflight-" + string(rune('a'+i))
			made, err := up.CreateVolume(t.Context(), name, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			vol, err := e.create(t, name, tt.params)
			if err != nil {
				t.Fatalf("retry of %s (upstream made %s at %s) = %v, want that access point adopted", name, made.AccessPointID, made.RootDir, err)
			}
			if h, _ := volume.ParseHandle(vol.GetVolumeId()); h.AccessPointID != made.AccessPointID {
				t.Errorf("volume %s, want upstream's access point %s", vol.GetVolumeId(), made.AccessPointID)
			}
		})
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != len(tests) {
		t.Errorf("%d access points, want %d (no second one per claim)", n, len(tests))
	}
	// What upstream's own retry refuses is still refused: an access point with the volume's token outside basePath,
	// or with a GID outside the range. A directory that is not upstream's form (the UUID replaced) is another
	// volume's, not upstream's attempt at this one.
	for _, tt := range []struct {
		name, root string
		gid        int64
		params     map[string]string
		want       string
	}{
		{"pvc-other-base", "/elsewhere/ns/claim-6f1c0f5e-3a52-4f8e-9b1e-0c5d2d7b8a11", 50000, e.params("basePath", "/dynamic", "subPathPattern", "${.PVC.namespace}/${.PVC.name}"), "root directory"},
		{"pvc-other-gid", "/ns/claim-6f1c0f5e-3a52-4f8e-9b1e-0c5d2d7b8a11", 7, e.params("subPathPattern", "${.PVC.namespace}/${.PVC.name}"), "gid"},
		{"pvc-not-a-uuid", "/ns/claim-data", 50000, e.params("subPathPattern", "${.PVC.namespace}/${.PVC.name}"), "root directory"},
	} {
		e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, ClientToken: tt.name, PosixUser: &fakeaws.PosixUser{Uid: tt.gid, Gid: tt.gid},
			RootDirectory: fakeaws.RootDirectory{Path: tt.root, CreationInfo: &fakeaws.CreationInfo{OwnerUid: tt.gid, OwnerGid: tt.gid, Permissions: "700"}}})
		_, err := e.create(t, tt.name, tt.params)
		wantCode(t, err, codes.AlreadyExists, tt.want)
	}
}
