package driver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	_, apC := create("pvc-c", "c", "${.PVC.namespace}/${.PVC.name}")
	_, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: a})
	// b has the same root; c's root /ns/c is inside a's root /ns: either one names the other access point.
	st, _ := status.FromError(err)
	if st.Code() != codes.FailedPrecondition || !contains(st.Message(), "kept") ||
		!(contains(st.Message(), apB+" has the same root directory") || contains(st.Message(), apC+" has its root directory /ns/c inside it")) {
		t.Fatalf("DeleteVolume of a shared root = %v; want FailedPrecondition naming %s or %s", err, apB, apC)
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != 3 {
		t.Fatalf("%d access points, want all 3 kept", n)
	}
}

// recordingDeleter records the root directories it is asked to delete and deletes nothing.
type recordingDeleter struct {
	mu      sync.Mutex
	deleted []string
}

func (r *recordingDeleter) Delete(_ context.Context, tgt rootdir.Target) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deleted = append(r.deleted, tgt.RootDir)
	return nil
}

// TestDeleteVolumeRootDirUnderAnotherAccessPointsRoot (issue 26 item 4): an access point rooted at "/" or at the
// StorageClass's basePath (a static volume an administrator made, or the upstream driver's reuse of a directory)
// lies above every dynamic volume's root. Its existence must not make every DeleteVolume on the file system fail
// forever: what must never be deleted is another volume's data, so deletion is refused only when another access
// point's root is this directory or inside it. The directory above keeps its own data; only this volume's
// directory goes. (Upstream v3.4.1 refuses nothing: kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9
// pkg/driver/controller.go DeleteVolume removes the root directory of any access point.)
func TestDeleteVolumeRootDirUnderAnotherAccessPointsRoot(t *testing.T) {
	rec := &recordingDeleter{}
	e := newEnv(t, envOpts{rootDir: rec})
	e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, PosixUser: &fakeaws.PosixUser{Uid: 0, Gid: 0}})
	e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, PosixUser: &fakeaws.PosixUser{Uid: 1000, Gid: 1000},
		RootDirectory: fakeaws.RootDirectory{Path: "/dynamic"}})
	vol, err := e.create(t, "pvc-under", e.params("basePath", "/dynamic"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()}); err != nil {
		t.Fatalf("DeleteVolume under an access point rooted at / and at basePath: %v", err)
	}
	if want := []string{"/dynamic/pvc-under"}; !slices.Equal(rec.deleted, want) {
		t.Errorf("root directories deleted: %v, want %v", rec.deleted, want)
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != 2 {
		t.Errorf("%d access points left, want the 2 above the deleted volume", n)
	}
}

// TestDeleteVolumeCrossAccountAccessPointGone (issue 26 item 5): across accounts, the cleanup mount needs a mount
// target, but the access point is described first: when it is already gone (or its file system, with its mount
// targets, is), there is nothing to clean and DeleteVolume succeeds, as upstream's does (its DescribeAccessPoint
// NotFound returns success before any mount target is looked at:
// kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9 pkg/driver/controller.go DeleteVolume).
func TestDeleteVolumeCrossAccountAccessPointGone(t *testing.T) {
	e := newEnv(t, envOpts{rootDir: refuseDeleter{t}})
	const role = "arn:aws:iam::210987654321:role/efs-owner"
	e.aws.AddRole(role, "")
	noTargets := e.aws.AddFileSystem(fakeaws.FileSystem{}) // its mount targets were deleted
	for _, id := range []string{
		noTargets + "::fsap-0123456789abcdef0",
		"fs-0123456789abcdef0::fsap-0123456789abcdef1", // the file system is gone too
	} {
		_, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: id, Secrets: map[string]string{"awsRoleArn": role}})
		if err != nil {
			t.Errorf("DeleteVolume(%s) across accounts with the access point gone = %v, want success", id, err)
		}
	}
}

// TestDeleteVolumeS3FilesRefused (issue 26 item 8): an s3files: handle is not an EFS volume this driver can
// delete. Reporting success would let Kubernetes drop the PV while the S3 Files access point stays; the error names
// the volume type instead, and no AWS call is made.
func TestDeleteVolumeS3FilesRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.aws.ResetCalls()
	_, err := e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: "s3files:fs-0123456789abcdef0::fsap-0123456789abcdef0"})
	wantCode(t, err, codes.InvalidArgument, "s3files", "not deleted")
	if n := e.aws.Calls("*"); n != 0 {
		t.Errorf("%d AWS calls, want none", n)
	}
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
