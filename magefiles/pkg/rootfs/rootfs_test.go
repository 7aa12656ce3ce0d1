package rootfs

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// hdr is one tar entry of a test layer: "d name mode", "f name mode", "l name target".
func tarLayer(t *testing.T, entries ...string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		f := strings.Fields(e)
		h := &tar.Header{Name: f[1], Mode: 0o644}
		switch f[0] {
		case "d":
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case "f":
			h.Typeflag = tar.TypeReg
		case "x":
			h.Typeflag, h.Mode = tar.TypeReg, 0o755
		case "l":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f[2]
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func image(t *testing.T, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestReadAppliesWhiteoutsAndFindsPrograms(t *testing.T) {
	rhel := tarLayer(t,
		"d usr", "d usr/bin", "d usr/sbin", "l bin usr/bin", "l sbin usr/sbin", "d usr/lib", "d usr/lib64",
		"x usr/bin/python3.9", "l usr/bin/python3 python3.9", "d usr/lib64/python3.9", "f usr/lib64/python3.9/os.py",
		"x usr/bin/stunnel", "x usr/sbin/mount.nfs", "l usr/sbin/mount.nfs4 mount.nfs",
		"d etc", "d etc/old", "f etc/old/a", "d etc/opaque", "f etc/opaque/gone")
	later := tarLayer(t, "f etc/.wh.old", "d etc/opaque", "f etc/opaque/.wh..wh..opq", "f etc/opaque/kept")
	fsys, err := Read(image(t, rhel, later))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"etc/old", "etc/old/a", "etc/opaque/gone", "etc/opaque/.wh..wh..opq"} {
		if _, ok := fsys.Lookup(p); ok {
			t.Errorf("/%s survived a whiteout", p)
		}
	}
	if _, ok := fsys.Lookup("/etc/opaque/kept/"); !ok {
		t.Error("a file added beside an opaque marker was removed")
	}
	py, err := fsys.FindPython()
	if err != nil || py.String() != "3.9" || py.Executable != "usr/bin/python3.9" || py.SitePackages() != "usr/local/lib/python3.9/site-packages" {
		t.Fatalf("FindPython = %+v, %v", py, err)
	}
	if m := fsys.Missing(9, EFSUtilsPrograms()); m != nil {
		t.Fatalf("Missing = %v, want nothing", m)
	}
	if r, err := fsys.ResolveParent("/sbin/mount.efs"); err != nil || r != "usr/sbin/mount.efs" {
		t.Fatalf("ResolveParent(/sbin/mount.efs) = %q, %v", r, err)
	}
	if r, err := fsys.ResolveParent("/var/run/efs"); err != nil || r != "var/run/efs" {
		t.Fatalf("ResolveParent of a missing directory = %q, %v", r, err)
	}
}

// TestReadSymlinkReplacingADirectory: a later layer turns /opt/app from a directory into a symlink; what the
// directory held is gone (the reader this replaced kept /opt/app/x).
func TestReadSymlinkReplacingADirectory(t *testing.T) {
	lower := tarLayer(t, "d opt", "d opt/app", "f opt/app/x", "d opt/real")
	upper := tarLayer(t, "l opt/app real")
	fsys, err := Read(image(t, lower, upper))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fsys.Lookup("opt/app/x"); ok {
		t.Error("/opt/app/x survived /opt/app becoming a symlink")
	}
	if n, ok := fsys.Lookup("opt/app"); !ok || n.Kind != Symlink || n.Link != "real" {
		t.Errorf("/opt/app = %+v, %v; want a symlink to real", n, ok)
	}
}

func TestMissingNamesWhatIsMissing(t *testing.T) {
	rows := []struct {
		name    string
		entries []string
		want    []string
	}{
		{"empty base", nil, []string{
			"mount.nfs4 (RPM nfs-utils): no executable at /sbin/mount.nfs4, /usr/sbin/mount.nfs4",
			"python3 (3.9 or newer, RPM python3): python3: not found at /usr/bin/python3, /usr/local/bin/python3 or /bin/python3",
			"stunnel (RPM stunnel): no executable at /usr/bin/stunnel, /usr/sbin/stunnel, /bin/stunnel, /sbin/stunnel",
		}},
		{"old python, stunnel not executable", []string{"d usr", "d usr/bin", "x usr/bin/python3.6", "l usr/bin/python3 python3.6", "f usr/bin/stunnel", "d sbin", "x sbin/mount.nfs4"}, []string{
			"python3 (3.9 or newer, RPM python3): found 3.6 at /usr/bin/python3.6",
			"stunnel (RPM stunnel): no executable at /usr/bin/stunnel, /usr/sbin/stunnel, /bin/stunnel, /sbin/stunnel",
		}},
		{"python3 without a version in its name, found by its standard library", []string{"d usr", "d usr/bin", "x usr/bin/python3", "d usr/lib", "d usr/lib/python3.11", "f usr/lib/python3.11/os.py", "x usr/bin/stunnel", "d usr/sbin", "x usr/sbin/mount.nfs4"}, nil},
		{"dangling symlink", []string{"d usr", "d usr/bin", "l usr/bin/python3 python3.9", "x usr/bin/stunnel", "d sbin", "x sbin/mount.nfs4"}, []string{
			"python3 (3.9 or newer, RPM python3): python3: not found at /usr/bin/python3, /usr/local/bin/python3 or /bin/python3",
		}},
		{"symlink loop", []string{"l a b", "l b a", "d usr", "d usr/bin", "l usr/bin/python3 /a", "x usr/bin/stunnel", "d sbin", "x sbin/mount.nfs4"}, []string{
			"python3 (3.9 or newer, RPM python3): python3: not found at /usr/bin/python3, /usr/local/bin/python3 or /bin/python3",
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			fsys, err := Read(image(t, tarLayer(t, row.entries...)))
			if err != nil {
				t.Fatal(err)
			}
			got := fsys.Missing(9, EFSUtilsPrograms())
			if strings.Join(got, "\n") != strings.Join(row.want, "\n") {
				t.Fatalf("Missing =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(row.want, "\n"))
			}
		})
	}
}
