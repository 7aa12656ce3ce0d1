package rootdir

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BindMounter stands in for `mount -t efs` (this kernel has no NFS client): it bind-mounts a local directory
// playing the file system root with real mount(8), read-only when asked, and records the options it was given.
type BindMounter struct {
	FSRoot   string
	ReadOnly bool
	Options  []string
}

func (b *BindMounter) Mount(ctx context.Context, _, target string, options []string) error {
	b.Options = options
	if out, err := exec.CommandContext(ctx, "mount", "--bind", b.FSRoot, target).CombinedOutput(); err != nil {
		return errors.New(string(out))
	}
	if b.ReadOnly {
		if out, err := exec.CommandContext(ctx, "mount", "-o", "remount,ro,bind", target).CombinedOutput(); err != nil {
			return errors.New(string(out))
		}
	}
	return nil
}

func (b *BindMounter) Unmount(ctx context.Context, target string) error {
	return ExecMounter{}.Unmount(ctx, target)
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for bind mounts; CI (go tool mage test) runs as root")
	}
}

func write(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestDeleteRemovesOnlyTheAccessPointDirectory(t *testing.T) {
	needRoot(t)
	fsRoot, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(fsRoot, "base/pvc-1/data/file"))
	write(t, filepath.Join(fsRoot, "base/pvc-2/file"))
	write(t, filepath.Join(outside, "precious"))
	// A user with the file system root mounted swapped a directory for a link that leaves the file system.
	if err := os.Symlink(outside, filepath.Join(fsRoot, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(fsRoot, "base/pvc-1/data/link-out")); err != nil {
		t.Fatal(err)
	}
	m := &BindMounter{FSRoot: fsRoot}
	d := &Deleter{Mounter: m, WorkDir: t.TempDir()}
	err := d.Delete(t.Context(), Target{FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123abcd", RootDir: "/base/pvc-1",
		MountOptions: []string{"tls", "iam"}})
	if err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(fsRoot, "base/pvc-1")) {
		t.Error("root directory still exists")
	}
	for _, keep := range []string{filepath.Join(fsRoot, "base/pvc-2/file"), filepath.Join(outside, "precious")} {
		if !exists(keep) {
			t.Errorf("%s was deleted", keep)
		}
	}
	if strings.Join(m.Options, ",") != "tls,iam" {
		t.Errorf("mount options = %v", m.Options)
	}
	if entries, _ := os.ReadDir(d.WorkDir); len(entries) != 0 {
		t.Errorf("temporary mount point left behind: %v", entries)
	}
	// Through a symlinked parent, the removal must not reach outside.
	err = d.Delete(t.Context(), Target{FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123abce", RootDir: "/evil/precious"})
	if err == nil {
		t.Error("delete through a symlink leaving the file system succeeded")
	}
	if !exists(filepath.Join(outside, "precious")) {
		t.Error("file outside the file system was deleted")
	}
}

// TestDeleteDoesNotStackOnALeftoverMount: a mount left on the work directory by a crashed controller (here a
// read-only mount of an unrelated directory) is taken off before the file system root is mounted, so the
// removal happens on the right file system and nothing stays mounted afterwards.
func TestDeleteDoesNotStackOnALeftoverMount(t *testing.T) {
	needRoot(t)
	fsRoot, stale := t.TempDir(), t.TempDir()
	write(t, filepath.Join(fsRoot, "pvc-1/file"))
	work := t.TempDir()
	mp := filepath.Join(work, "fsap-0123abcd")
	if err := os.MkdirAll(mp, 0o700); err != nil {
		t.Fatal(err)
	}
	leftover := &BindMounter{FSRoot: stale, ReadOnly: true}
	if err := leftover.Mount(t.Context(), "", mp, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mp).Run() })
	d := &Deleter{Mounter: &BindMounter{FSRoot: fsRoot}, WorkDir: work}
	if err := d.Delete(t.Context(), Target{FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123abcd", RootDir: "/pvc-1"}); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(fsRoot, "pvc-1")) {
		t.Error("root directory still exists")
	}
	if mounted, _ := (&Deleter{}).isMounted(mp); mounted || exists(mp) {
		t.Errorf("work directory %s still mounted (%v) or present after the delete", mp, mounted)
	}
}

func TestDeleteRefusesUnsafeRoots(t *testing.T) {
	for _, dir := range []string{"", "/", "relative", "/a/../..", "/a/..", "/a//b", "/a/./b"} {
		d := &Deleter{Mounter: &BindMounter{FSRoot: "/nonexistent"}, WorkDir: t.TempDir()}
		err := d.Delete(t.Context(), Target{FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123abcd", RootDir: dir})
		if !errors.Is(err, ErrUnsafePath) {
			t.Errorf("RootDir %q: err = %v, want ErrUnsafePath", dir, err)
		}
	}
}

func TestDeleteReportsRemovalFailure(t *testing.T) {
	needRoot(t)
	fsRoot := t.TempDir()
	write(t, filepath.Join(fsRoot, "pvc-1/file"))
	d := &Deleter{Mounter: &BindMounter{FSRoot: fsRoot, ReadOnly: true}, WorkDir: t.TempDir()}
	err := d.Delete(t.Context(), Target{FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123abcd", RootDir: "/pvc-1"})
	if err == nil || !strings.Contains(err.Error(), "remove root directory /pvc-1") {
		t.Fatalf("err = %v, want the removal failure", err)
	}
	if !exists(filepath.Join(fsRoot, "pvc-1/file")) {
		t.Fatal("data vanished although removal reported failure")
	}
}

func TestExecMounterArguments(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "args")
	script := filepath.Join(dir, "mount")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" >> "+log+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := ExecMounter{MountCommand: script, UnmountCommand: script}
	if err := m.Mount(t.Context(), "fs-0123abcd:/", "/mnt/x", []string{"tls", "iam", "mounttargetip=10.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Unmount(t.Context(), "/mnt/x"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(log)
	want := "-t efs -o tls,iam,mounttargetip=10.0.0.1 fs-0123abcd:/ /mnt/x\n/mnt/x\n"
	if string(got) != want {
		t.Fatalf("commands:\n%s\nwant:\n%s", got, want)
	}
	failing := ExecMounter{MountCommand: "false"}
	if err := failing.Mount(t.Context(), "fs-0123abcd:/", "/mnt/x", nil); err == nil {
		t.Fatal("failing mount reported success")
	}
}

func (d *Deleter) isMounted(p string) (bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == p {
			return true, nil
		}
	}
	return false, nil
}
