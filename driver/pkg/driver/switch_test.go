package driver

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
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

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestGIDsBesideAWriterThatAllocatesLikeUpstream (issue 26 item 3): another writer on the file system (the upstream
// driver during a switch, or in another cluster) allocates as upstream v3.4.1 does: it lists every access point and
// takes the lowest free GID (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9
// pkg/driver/gid_allocator.go getNextUnusedGid). This driver trusts its view for --gid-resync-period, so exactly
// one case can give a duplicate, as docs/driver/differences-from-upstream.md says: a GID the other writer takes
// after this driver's last listing, handed out here before its next one. Once a listing has shown the other writer,
// the view is trusted for at most a second and GIDs come from the top of the range, so alternating creates never
// collide again.
func TestGIDsBesideAWriterThatAllocatesLikeUpstream(t *testing.T) {
	e := newEnv(t, envOpts{})
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	ctrl := NewController(ControllerConfig{Provisioner: provision.New(provision.Config{GIDs: gidalloc.New(time.Minute, clock.Now)})})
	ctrl.SetClouds(newProvider(t, e.aws, e.metrics))
	up := upstreamwriter.New(e.aws.URL())
	ours := func(name string) {
		t.Helper()
		if _, err := ctrl.CreateVolume(t.Context(), createReq(name, e.params(), nil)); err != nil {
			t.Fatalf("CreateVolume %s: %v", name, err)
		}
	}
	theirs := func(name string) int64 {
		t.Helper()
		r, err := up.CreateVolume(t.Context(), name, e.params())
		if err != nil {
			t.Fatal(err)
		}
		return r.GID
	}
	duplicates := func() map[int64]int {
		n := map[int64]int{}
		for _, ap := range e.aws.AccessPoints(e.fsID) {
			n[ap.PosixUser.Gid]++
		}
		for g, c := range n {
			if c < 2 {
				delete(n, g)
			}
		}
		return n
	}
	ours("pvc-ours-0") // the first listing: an empty file system
	taken := theirs("pvc-theirs-0")
	ours("pvc-ours-1") // inside the resync period: the view does not know the other writer's GID yet
	if d := duplicates(); len(d) != 1 || d[taken] != 2 {
		t.Fatalf("duplicates %v; the documented case gives exactly GID %d twice", d, taken)
	}
	clock.Add(time.Minute) // the next listing shows the other writer
	for i := range 20 {
		ours(fmt.Sprintf("pvc-ours-%d", i+2))
		theirs(fmt.Sprintf("pvc-theirs-%d", i+1))
	}
	if d := duplicates(); len(d) != 1 {
		t.Fatalf("duplicates %v after the other writer was seen; want only the documented one (GID %d)", d, taken)
	}
}
