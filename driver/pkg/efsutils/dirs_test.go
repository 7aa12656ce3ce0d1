package efsutils

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func testDirs(t *testing.T) Dirs {
	root := t.TempDir()
	return Dirs{ConfigDir: filepath.Join(root, "var/amazon/efs"), LegacyDir: filepath.Join(root, "etc/amazon/efs-legacy"),
		LinkPath: filepath.Join(root, "etc/amazon/efs"), StaticDir: filepath.Join(root, "static"), StateDir: filepath.Join(root, "run/efs")}
}

func TestSetupChoosesDirectory(t *testing.T) {
	cases := []struct {
		name       string
		legacyConf bool
		wantLegacy bool
	}{
		{name: "fresh node uses the new directory"},
		{name: "node with a legacy config keeps it", legacyConf: true, wantLegacy: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := testDirs(t)
			if tc.legacyConf {
				write(t, filepath.Join(d.LegacyDir, ConfFile), "old")
				write(t, filepath.Join(d.LegacyDir, "privateKey.pem"), "key")
			}
			write(t, filepath.Join(d.StaticDir, "efs-utils.crt"), "ca-v2")
			write(t, filepath.Join(d.StaticDir, ConfFile), "shipped")
			write(t, filepath.Join(d.StaticDir, "extra.conf"), "static extra")
			dir, err := Setup(d, []byte("rendered"))
			if err != nil {
				t.Fatal(err)
			}
			want := d.ConfigDir
			if tc.wantLegacy {
				want = d.LegacyDir
			}
			if dir != want {
				t.Fatalf("chose %s, want %s", dir, want)
			}
			if got, _ := os.Readlink(d.LinkPath); got != want {
				t.Fatalf("link -> %q, want %q", got, want)
			}
			// through the link, as efs-utils reads it
			if got := read(t, filepath.Join(d.LinkPath, ConfFile)); got != "rendered" {
				t.Fatalf("efs-utils.conf = %q", got)
			}
			if got := read(t, filepath.Join(d.LinkPath, "efs-utils.crt")); got != "ca-v2" {
				t.Fatalf("efs-utils.crt = %q", got)
			}
			if tc.legacyConf && read(t, filepath.Join(dir, "privateKey.pem")) != "key" {
				t.Fatal("legacy private key lost")
			}
		})
	}
}

func TestCopyStaticKeepsLocalFilesButRefreshesCA(t *testing.T) {
	d := testDirs(t)
	write(t, filepath.Join(d.StaticDir, "efs-utils.crt"), "ca-new")
	write(t, filepath.Join(d.StaticDir, "extra.conf"), "image")
	write(t, filepath.Join(d.ConfigDir, "efs-utils.crt"), "ca-old")
	write(t, filepath.Join(d.ConfigDir, "extra.conf"), "edited on the node")
	if err := CopyStatic(d.StaticDir, d.ConfigDir); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(d.ConfigDir, "efs-utils.crt")) != "ca-new" || read(t, filepath.Join(d.ConfigDir, "extra.conf")) != "edited on the node" {
		t.Fatal("static copy rules not followed")
	}
	if err := CopyStatic(filepath.Join(d.StaticDir, "missing"), d.ConfigDir); err != nil {
		t.Fatalf("missing static dir: %v", err)
	}
}

func TestLink(t *testing.T) {
	d := testDirs(t)
	for _, target := range []string{d.LegacyDir, d.ConfigDir, d.ConfigDir} { // replace, then idempotent
		if err := Link(d.LinkPath, target); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.Readlink(d.LinkPath); got != target {
			t.Fatalf("link -> %q, want %q", got, target)
		}
	}
	// an empty real directory is replaced, a non-empty one refused
	other := filepath.Join(t.TempDir(), "efs")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Link(other, d.ConfigDir); err != nil {
		t.Fatalf("empty dir: %v", err)
	}
	full := filepath.Join(t.TempDir(), "efs")
	write(t, filepath.Join(full, "privateKey.pem"), "k")
	if err := Link(full, d.ConfigDir); err == nil {
		t.Fatal("non-empty directory replaced")
	}
}

func TestStripLibwrap(t *testing.T) {
	d := testDirs(t)
	old := "fips = no\npid = /var/run/efs/x+/stunnel.pid\n[efs]\nclient = yes\nlibwrap = no\naccept = 127.0.0.1:20100\n"
	write(t, filepath.Join(d.StateDir, "stunnel-config.fs-1.mnt.20100"), old)
	clean := "[efs]\nclient = yes\n"
	write(t, filepath.Join(d.StateDir, "stunnel-config.fs-1.mnt.20101"), clean)
	write(t, filepath.Join(d.StateDir, "fs-1.mnt.20100"), `{"libwrap = no": 1}`) // a state file is not a relay config
	if err := os.Chmod(filepath.Join(d.StateDir, "stunnel-config.fs-1.mnt.20100"), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := StripLibwrap(d.StateDir)
	if err != nil || n != 1 {
		t.Fatalf("StripLibwrap = %d, %v; want 1 file", n, err)
	}
	got := read(t, filepath.Join(d.StateDir, "stunnel-config.fs-1.mnt.20100"))
	if got != "fips = no\npid = /var/run/efs/x+/stunnel.pid\n[efs]\nclient = yes\naccept = 127.0.0.1:20100\n" {
		t.Fatalf("stripped config:\n%s", got)
	}
	if st, _ := os.Stat(filepath.Join(d.StateDir, "stunnel-config.fs-1.mnt.20100")); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", st.Mode())
	}
	if read(t, filepath.Join(d.StateDir, "stunnel-config.fs-1.mnt.20101")) != clean {
		t.Fatal("clean config changed")
	}
}
