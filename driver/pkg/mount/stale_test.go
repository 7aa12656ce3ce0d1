package mount

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	mountutils "k8s.io/mount-utils"
)

// bindOS is the real mount-utils OS (mount(8), umount(8), /proc/self/mountinfo) whose Mount bind-mounts a backing
// directory in place of the EFS mount this kernel cannot make (it has no NFS client).
type bindOS struct {
	*mountutils.Mounter
	backing string
	mounts  int
}

func (b *bindOS) Mount(_, target, _ string, _ []string) error {
	b.mounts++
	return b.Mounter.Mount(b.backing, target, "", []string{"bind"})
}

// mountDeadFUSE mounts, at target, a FUSE file system whose server never answers (nobody reads /dev/fuse, so even
// the INIT request stays unanswered): every stat of target blocks, as on a hard NFS mount whose server or TLS relay
// is gone. Cleanup closes the device (aborting the connection, which releases blocked stats) and detaches lazily.
func mountDeadFUSE(t *testing.T, target string) {
	t.Helper()
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/fuse: %v", err)
	}
	opts := fmt.Sprintf("fd=%d,rootmode=40000,user_id=0,group_id=0", dev.Fd())
	if err := unix.Mount("efs-stale-test", target, "fuse", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		_ = dev.Close()
		t.Fatalf("mount fuse at %s: %v", target, err)
	}
	t.Cleanup(func() {
		_ = dev.Close()
		_ = unix.Unmount(target, unix.MNT_DETACH)
	})
}

// TestPublishRecoversStaleMount: a target holding the same volume, with a matching publish record, whose server has
// stopped answering, is not reported as published: a bounded stat finds it stale, the mount is detached and the
// volume mounted again. Real mount(8), /proc/self/mountinfo and a FUSE mount that never answers; needs root.
func TestPublishRecoversStaleMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for real mounts; CI (go tool mage test) runs as root")
	}
	dir := t.TempDir()
	backing := filepath.Join(dir, "backing")
	target := filepath.Join(dir, "pods", "target")
	if err := os.MkdirAll(backing, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backing, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := NewRecords(filepath.Join(dir, "records"))
	if err != nil {
		t.Fatal(err)
	}
	bos := &bindOS{Mounter: mountutils.NewWithoutSystemd("").(*mountutils.Mounter), backing: backing}
	m := New(Config{OS: bos, Records: recs, StateDir: dir, StaleAfter: 300 * time.Millisecond})
	t.Cleanup(func() {
		for i := 0; i < maxLayers; i++ {
			if unix.Unmount(target, unix.MNT_DETACH) != nil {
				break
			}
		}
	})
	if err := m.Publish(t.Context(), "vol-a", target, specA, false); err != nil {
		t.Fatal(err)
	}
	// The server stops answering: the bind mount is replaced by one that never answers (same record, same target).
	if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	mountDeadFUSE(t, target)

	done := make(chan error, 1)
	go func() { done <- m.Publish(t.Context(), "vol-a", target, specA, false) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("publish over a stale mount: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("publish over a stale mount did not return within 10s")
	}
	if bos.mounts != 2 {
		t.Fatalf("%d mounts, want 2: the stale mount must be mounted again, not reported as published", bos.mounts)
	}
	statDone := make(chan error, 1)
	go func() { _, err := statFile(filepath.Join(target, "data")); statDone <- err }()
	select {
	case err := <-statDone:
		if err != nil {
			t.Fatalf("target after recovery: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("target still hangs after recovery")
	}
	// A healthy mount stays as it is.
	if err := m.Publish(t.Context(), "vol-a", target, specA, false); err != nil || bos.mounts != 2 {
		t.Fatalf("publish over a healthy mount: %v, %d mounts (want 2)", err, bos.mounts)
	}

	// Unpublishing a mount that stopped answering detaches it instead of hanging in umount(8).
	mountDeadFUSE(t, target)
	go func() { done <- m.Unpublish(t.Context(), "vol-a", target) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("unpublish of a stale mount: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("unpublish of a stale mount did not return within 10s")
	}
	if mounted, err := m.isMounted(target); err != nil || mounted {
		t.Fatalf("after unpublish: mounted=%v err=%v", mounted, err)
	}
}

// TestResponsiveReportsCorruptedMount: a stat answering with a corrupted-mount error (ENOTCONN from an aborted FUSE
// connection, as ESTALE or EIO from NFS) is stale at once.
func TestResponsiveReportsCorruptedMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for real mounts; CI (go tool mage test) runs as root")
	}
	target := t.TempDir()
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/fuse: %v", err)
	}
	if err := unix.Mount("efs-stale-test", target, "fuse", 0, fmt.Sprintf("fd=%d,rootmode=40000,user_id=0,group_id=0", dev.Fd())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(target, unix.MNT_DETACH) })
	_ = dev.Close() // the server is gone: the connection is aborted
	m := New(Config{StaleAfter: 2 * time.Second})
	if err := m.responsive(target); !errors.Is(err, errStale) || !errors.Is(err, unix.ENOTCONN) {
		t.Fatalf("responsive(aborted FUSE mount) = %v, want stale with ENOTCONN", err)
	}
}

func statFile(p string) (os.FileInfo, error) { return os.Stat(p) }
