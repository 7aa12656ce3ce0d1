package driver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/openshift/aws-efs-csi/driver/pkg/rootdir"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// bindMounter stands in for `mount -t efs` (no NFS client in this kernel): real mount(8) bind-mounts a local
// directory playing the file system root, read-only when asked.
type bindMounter struct {
	fsRoot   string
	readOnly bool
	options  []string
}

func (b *bindMounter) Mount(ctx context.Context, _, target string, options []string) error {
	b.options = options
	args := [][]string{{"--bind", b.fsRoot, target}}
	if b.readOnly {
		args = append(args, []string{"-o", "remount,ro,bind", target})
	}
	for _, a := range args {
		if out, err := exec.CommandContext(ctx, "mount", a...).CombinedOutput(); err != nil {
			return errors.New(string(out))
		}
	}
	return nil
}

func (b *bindMounter) Unmount(ctx context.Context, target string) error {
	return rootdir.ExecMounter{}.Unmount(ctx, target)
}

func TestDeleteVolume(t *testing.T) {
	e := newEnv(t, envOpts{})
	vol, err := e.create(t, "pvc-1", e.params())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call finds nothing to delete and still succeeds
		if _, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != 0 {
		t.Fatalf("%d access points after delete", n)
	}
	for _, id := range []string{"not-a-handle", e.fsID, e.fsID + ":/static"} {
		if _, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Errorf("DeleteVolume(%q) = %v, want success", id, err)
		}
	}
	_, err = e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{})
	wantCode(t, err, codes.InvalidArgument, "volume ID")
	if e.aws.Calls("DeleteAccessPoint") != 2 {
		t.Errorf("DeleteAccessPoint calls = %d, want 2 (none for IDs without an access point)", e.aws.Calls("DeleteAccessPoint"))
	}
}

func TestDeleteVolumeRootDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for bind mounts; CI (go tool mage test) runs as root")
	}
	fsRoot := t.TempDir()
	m := &bindMounter{fsRoot: fsRoot}
	e := newEnv(t, envOpts{rootDir: &rootdir.Deleter{Mounter: m, WorkDir: t.TempDir()}})
	mkVolume := func(name string) (string, string) {
		vol, err := e.create(t, name, e.params())
		if err != nil {
			t.Fatal(err)
		}
		h, _ := volume.ParseHandle(vol.GetVolumeId())
		ap, _ := e.aws.AccessPoint(h.AccessPointID)
		dir := filepath.Join(fsRoot, ap.RootDirectory.Path)
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sub", "data"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return vol.GetVolumeId(), dir
	}
	keepID, keepDir := mkVolume("pvc-keep")
	id, dir := mkVolume("pvc-1")

	// Removal fails (read-only file system): the access point stays for a retry.
	m.readOnly = true
	_, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: id})
	wantCode(t, err, codes.Internal, "kept", "remove root directory")
	if len(e.aws.AccessPoints(e.fsID)) != 2 {
		t.Fatal("access point deleted although its data was not")
	}
	// A handle naming another file system than the access point's: nothing is deleted.
	other := e.aws.AddFileSystem(fakeaws.FileSystem{})
	h, _ := volume.ParseHandle(id)
	_, err = e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: other + "::" + h.AccessPointID})
	wantCode(t, err, codes.FailedPrecondition, other, e.fsID)
	// The retry finishes the job, and only this volume's directory goes.
	m.readOnly = false
	if _, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("root directory %s still there: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(keepDir, "sub", "data")); err != nil {
		t.Errorf("other volume's data gone: %v", err)
	}
	if aps := e.aws.AccessPoints(e.fsID); len(aps) != 1 || !contains(keepID, aps[0].AccessPointId) {
		t.Errorf("access points left: %v", aps)
	}
	if len(m.options) != 2 || m.options[0] != "tls" || m.options[1] != "iam" {
		t.Errorf("cleanup mount options %v, want [tls iam]", m.options)
	}
	// An access point rooted at "/" (made behind the driver's back) is never emptied.
	rootAP := e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, PosixUser: &fakeaws.PosixUser{Uid: 1, Gid: 1}})
	_, err = e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: e.fsID + "::" + rootAP})
	wantCode(t, err, codes.FailedPrecondition, "kept", "file system root")
	if _, err := os.Stat(filepath.Join(keepDir, "sub", "data")); err != nil {
		t.Errorf("data under / deleted: %v", err)
	}
}

// refuseDeleter fails the test if a root directory deletion is attempted.
type refuseDeleter struct{ t *testing.T }

func (r refuseDeleter) Delete(_ context.Context, tgt rootdir.Target) error {
	r.t.Errorf("root directory %s of %s deleted although another access point uses it", tgt.RootDir, tgt.AccessPointID)
	return nil
}

// TestDeleteVolumeRootDirSharedWithAnotherAccessPoint: with ensureUniqueDirectory=false and a pattern such as
// ${.PVC.namespace}, volumes share a root directory, or one's root is inside another's. Deleting the directory
// would delete the other volume's data: the access point is kept, nothing is removed, and FailedPrecondition names
// the other access point. (Upstream deletes it.)
func TestDeleteVolumeRootDirSharedWithAnotherAccessPoint(t *testing.T) {
	e := newEnv(t, envOpts{rootDir: refuseDeleter{t}})
	create := func(name, claim, pattern string) (string, string) {
		vol, err := e.create(t, name, e.params("subPathPattern", pattern, "ensureUniqueDirectory", "false", scparams.ParamPVCName, claim))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := volume.ParseHandle(vol.GetVolumeId())
		return vol.GetVolumeId(), h.AccessPointID
	}
	a, _ := create("pvc-a", "a", "${.PVC.namespace}")
	_, apB := create("pvc-b", "b", "${.PVC.namespace}")
	c, apC := create("pvc-c", "c", "${.PVC.namespace}/${.PVC.name}")
	for _, tt := range []struct {
		volume, other, how string
	}{
		{a, apB, "same root directory"},
		{c, "", "above it"}, // /ns/c is inside /ns, the root of a and b
	} {
		_, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: tt.volume})
		wantCode(t, err, codes.FailedPrecondition, "kept", tt.other, tt.how)
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != 3 {
		t.Fatalf("%d access points, want all 3 kept", n)
	}
	_ = apC
}

// blockingDeleter holds root-directory deletion until released.
type blockingDeleter struct {
	entered chan struct{}
	release chan struct{}
}

func (b blockingDeleter) Delete(ctx context.Context, _ rootdir.Target) error {
	close(b.entered)
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return nil
}

// TestCreateAndDeleteOfOneAccessPointNeverOverlap: while DeleteVolume works on an access point, a CreateVolume that
// finds the same access point (a reused claim) answers Aborted instead of handing out a volume that is being
// deleted; once the delete is done, the retry creates a new access point. (Upstream: one lock per access point.)
func TestCreateAndDeleteOfOneAccessPointNeverOverlap(t *testing.T) {
	b := blockingDeleter{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, envOpts{rootDir: b})
	params := e.params("reuseAccessPoint", "true", scparams.ParamPVCName, "data")
	vol, err := e.create(t, "pvc-1", params)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()})
		done <- err
	}()
	<-b.entered
	_, err = e.create(t, "pvc-2", params)
	wantCode(t, err, codes.Aborted, "in progress")
	close(b.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	again, err := e.create(t, "pvc-2", params)
	if err != nil || again.GetVolumeId() == vol.GetVolumeId() {
		t.Fatalf("create after the delete = %v, %v; want a new access point", again.GetVolumeId(), err)
	}
}
