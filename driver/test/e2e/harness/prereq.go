package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// Tools the end-to-end tests run.
const (
	Python  = "/usr/bin/python3"
	Stunnel = "/usr/bin/stunnel4"
)

// RequireRoot skips when not root (real mounts need it) and fails when root but a system package is missing:
// CI runs as root and `go tool mage test` installs stunnel4, python3, python3-cryptography and python3-botocore.
func RequireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: real mount(8), bind mounts and /sbin/mount.efs; CI runs these tests as root")
	}
	for _, tool := range []string{Python, Stunnel, "/usr/bin/mount", "/usr/bin/umount"} {
		if _, err := os.Stat(tool); err != nil {
			t.Fatalf("%s is missing: apt-get install -y stunnel4 python3 python3-cryptography python3-botocore (go tool mage test installs them)", tool)
		}
	}
	if out, err := exec.CommandContext(t.Context(), Python, "-c", "import cryptography, botocore").CombinedOutput(); err != nil {
		t.Fatalf("python3 modules missing (apt-get install -y python3-cryptography python3-botocore): %v\n%s", err, out)
	}
}

// Repo returns the repository root (the directory holding driver/ and efs-utils/).
func Repo(t *testing.T) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(here), "..", "..", "..", ".."))
}

// helperLock serialises the tests that replace /sbin/mount.efs across test processes (packages run in parallel).
const helperLock = "/run/lock/aws-efs-csi-e2e-mount-helper.lock"

// InstallMountHelper makes /sbin/mount.efs a symbolic link to the repository's efs-utils/bin/mount.efs for the
// test (mount -t efs always runs /sbin/mount.efs), restoring whatever was there afterwards. The production path
// stays `mount -t efs`.
func InstallMountHelper(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(helperLock), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(helperLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	const helper = "/sbin/mount.efs"
	backup := ""
	if _, err := os.Lstat(helper); err == nil {
		backup = helper + ".e2e-backup"
		if err := os.Rename(helper, backup); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(Repo(t), "efs-utils", "bin", "mount.efs"), helper); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.Remove(helper)
		if backup != "" {
			_ = os.Rename(backup, helper)
		}
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		_ = lock.Close()
	})
}

// BuildDriver builds the driver binary into dir.
func BuildDriver(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "aws-efs-csi-driver")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/aws-efs-csi-driver")
	cmd.Dir = filepath.Join(Repo(t), "driver")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
