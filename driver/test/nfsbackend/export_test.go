package nfsbackend

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestServedPath(t *testing.T) {
	ap := &AccessPoint{RootDir: "/dynamic/pvc-1"}
	rows := []struct {
		name   string
		ap     *AccessPoint
		export string
		want   string
	}{
		{"file system root", nil, "/", "/"},
		{"sub-path", nil, "/a/b", "/a/b"},
		{"access point root", ap, "/", "/dynamic/pvc-1"},
		{"below the access point", ap, "/sub", "/dynamic/pvc-1/sub"},
		{"cannot climb out of the access point", ap, "/../../etc", "/dynamic/pvc-1/etc"},
		{"access point at /", &AccessPoint{RootDir: "/"}, "/x", "/x"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if got := servedPath(row.ap, row.export); got != row.want {
				t.Fatalf("servedPath = %q, want %q", got, row.want)
			}
		})
	}
}

func TestFileMode(t *testing.T) {
	if m := fileMode(0o2750); m.Perm() != 0o750 || m&os.ModeSetgid == 0 || m&os.ModeSetuid != 0 {
		t.Fatalf("fileMode(02750) = %v", m)
	}
}

func TestOpenExport(t *testing.T) {
	uid, gid := os.Getuid(), os.Getgid() // root in CI; a non-root run can only chown to itself
	fsRoot := t.TempDir()
	ap := &AccessPoint{ID: "fsap-1", RootDir: "/a/b", Creation: &CreationInfo{UID: uint32(uid), GID: uint32(gid), Permissions: 0o1770}}
	f, served, err := openExport(fsRoot, ap, "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if served != "/a/b" {
		t.Fatalf("served %q", served)
	}
	for _, d := range []string{"a", "a/b"} {
		st, err := os.Stat(filepath.Join(fsRoot, d))
		if err != nil {
			t.Fatal(err)
		}
		if mode := st.Sys().(*syscall.Stat_t).Mode & 0o7777; mode != 0o1770 {
			t.Fatalf("%s mode %o, want 1770 (CreationInfo, not cut by the umask)", d, mode)
		}
	}
	// an existing root directory is left as it is
	if err := os.Chmod(filepath.Join(fsRoot, "a", "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	if f, _, err = openExport(fsRoot, ap, "/"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if st, _ := os.Stat(filepath.Join(fsRoot, "a", "b")); st.Mode().Perm() != 0o700 {
		t.Fatalf("existing root directory changed to %v", st.Mode())
	}
	// missing: without CreationInfo, and a missing sub-path
	if _, _, err := openExport(fsRoot, &AccessPoint{ID: "fsap-2", RootDir: "/none"}, "/"); !errors.Is(err, ErrNoExport) {
		t.Fatalf("missing root directory without CreationInfo: %v", err)
	}
	if _, _, err := openExport(fsRoot, ap, "/missing"); !errors.Is(err, ErrNoExport) {
		t.Fatalf("missing sub-path: %v", err)
	}
	// a symbolic link in the backing store cannot lead out of it
	if err := os.Symlink("/etc", filepath.Join(fsRoot, "escape")); err != nil {
		t.Fatal(err)
	}
	if f, _, err := openExport(fsRoot, nil, "/escape"); err == nil {
		_ = f.Close()
		t.Fatal("served a symbolic link out of the backing directory")
	}
	if err := os.WriteFile(filepath.Join(fsRoot, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openExport(fsRoot, nil, "/file"); err == nil {
		t.Fatal("served a regular file")
	}
}
