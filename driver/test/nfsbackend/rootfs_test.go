package nfsbackend

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// container starts a process that looks like a container's to the backend: its own mount namespace (unshare -m)
// and its own root directory (chroot) with Debian's /var/run -> /run absolute link; /usr is bound in so that it
// can run sleep. It returns the process ID and the root directory.
func container(t *testing.T) (int, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: unshare, chroot and bind mounts; CI runs it as root")
	}
	root := t.TempDir()
	for _, d := range []string{"usr", "run/efs", "var", "proc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64", "var/run": "/run"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
		`mount --bind /usr "$1/usr" && exec chroot "$1" /usr/bin/sleep 300`, "sh", root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for {
		if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && strings.HasSuffix(exe, "sleep") {
			return pid, root
		}
		if time.Now().After(deadline) {
			t.Fatal("the container process did not start sleep")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTableInContainerRoot: the table a caller names is written in the caller's root, through its absolute
// /var/run -> /run link resolved there (not on the host's /run), and pruned from the caller's mount table view.
func TestTableInContainerRoot(t *testing.T) {
	pid, root := container(t)
	ino, err := nsInode(strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	name := "nfs4-mounts-" + filepath.Base(root)
	ts := newTables()
	// /usr is a mount point in the container (the bind above), /mnt is not
	for _, e := range []Entry{{"127.0.0.1:/", "/usr", "port=1"}, {"127.0.0.1:/", "/mnt", "port=2"}} {
		if err := ts.add(pid, ino, "/var/run/efs/"+name, e); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "run", "efs", name))
	if err != nil {
		t.Fatalf("table not in the container's /run/efs: %v", err)
	}
	if string(b) != "127.0.0.1:/ /usr nfs4 port=1 0 0\n" {
		t.Fatalf("table %q", b)
	}
	if _, err := os.Stat(filepath.Join("/run/efs", name)); !os.IsNotExist(err) {
		t.Fatalf("table written on the host's /run/efs: %v", err)
	}
	// a directory that does not exist yet in the container is created there
	if err := ts.add(pid, ino, "/var/lib/standin/"+name, Entry{"127.0.0.1:/", "/usr", "port=3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "var", "lib", "standin", name)); err != nil {
		t.Fatal(err)
	}
	st, err := statInRoot(pid, "/var/run/efs")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(filepath.Join(root, "run", "efs"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Ino != want.Sys().(*syscall.Stat_t).Ino {
		t.Fatal("statInRoot did not resolve /var/run/efs inside the container")
	}
}
