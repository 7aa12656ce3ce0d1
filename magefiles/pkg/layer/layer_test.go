package layer

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/rootfs"
)

var epoch = time.Unix(1700000000, 0)

func sample(t *testing.T) []Entry {
	t.Helper()
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []Entry{
		{Path: "/usr/bin/tool", Kind: File, Mode: 0o755, Source: src},
		{Path: "/etc/app/conf", Kind: File, Mode: 0o444, Data: []byte("k=v\n")},
		{Path: "etc/app", Kind: Dir, Mode: 0o750},
		{Path: "/usr/bin/alias", Kind: Symlink, Link: "tool"},
		{Path: "/etc/old", Kind: Whiteout},
	}
}

type tarEntry struct {
	name, link string
	typ        byte
	mode       int64
	uid, gid   int
	mtime      int64
	data       string
}

func readLayer(t *testing.T, r Result) []tarEntry {
	t.Helper()
	rc, err := r.Layer.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out = append(out, tarEntry{h.Name, h.Linkname, h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime.Unix(), string(data)})
	}
}

func TestBuildWritesSortedRootOwnedEntries(t *testing.T) {
	r, err := NewCache(Options{MTime: epoch, CacheDir: t.TempDir()}).Build(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []tarEntry{
		{name: "etc/app/", typ: tar.TypeDir, mode: 0o750},
		{name: "etc/app/conf", typ: tar.TypeReg, mode: 0o444, data: "k=v\n"},
		{name: "etc/.wh.old", typ: tar.TypeReg, mode: 0o644},
		{name: "usr/bin/alias", typ: tar.TypeSymlink, mode: 0o777, link: "tool"},
		{name: "usr/bin/tool", typ: tar.TypeReg, mode: 0o755, data: "#!/bin/sh\necho hi\n"},
	}
	got := readLayer(t, r)
	if len(got) != len(want) {
		t.Fatalf("layer holds %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		want[i].mtime = epoch.Unix()
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !r.Built {
		t.Error("first build reported as cached")
	}
}

func TestBuildIsReproducibleAndCached(t *testing.T) {
	entries := sample(t)
	a, err := NewCache(Options{MTime: epoch, CacheDir: t.TempDir()}).Build(entries)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	// Reverse order, another cache directory: same bytes.
	rev := append([]Entry(nil), entries...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	b, err := NewCache(Options{MTime: epoch, CacheDir: cache}).Build(rev)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Layer.Digest()
	db, _ := b.Layer.Digest()
	if da != db {
		t.Fatalf("same entries gave digests %s and %s", da, db)
	}
	c, err := NewCache(Options{MTime: epoch, CacheDir: cache}).Build(entries)
	if err != nil || c.Built {
		t.Fatalf("second build in the same cache: Built=%v err=%v, want a cache hit", c.Built, err)
	}
	// The recorded diffID is the hash of the uncompressed tar.
	diffID, _ := c.Layer.DiffID()
	rc, _ := c.Layer.Uncompressed()
	raw, _ := io.ReadAll(rc)
	rc.Close()
	if got := fmt.Sprintf("sha256:%x", sha256.Sum256(raw)); got != diffID.String() {
		t.Errorf("diffID %s, uncompressed content hashes to %s", diffID, got)
	}
	d, err := NewCache(Options{MTime: epoch.Add(time.Second), CacheDir: cache}).Build(entries)
	if err != nil {
		t.Fatal(err)
	}
	if dd, _ := d.Layer.Digest(); dd == da {
		t.Error("another mtime gave the same digest")
	}
}

func TestBuildRejectsBadEntries(t *testing.T) {
	rows := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"root", []Entry{{Path: "/", Kind: Dir, Mode: 0o755}}, "want a path below /"},
		{"duplicate", []Entry{{Path: "/a", Kind: Dir}, {Path: "a/", Kind: Dir}}, "/a: listed twice"},
		{"data and source", []Entry{{Path: "/a", Kind: File, Data: []byte("x"), Source: "/etc/hostname"}}, "both Data and Source"},
		{"symlink without target", []Entry{{Path: "/a", Kind: Symlink}}, "symlink without a target"},
		{"mode type bits", []Entry{{Path: "/a", Kind: File, Mode: 0o100644}}, "want permission bits only"},
		{"reserved name", []Entry{{Path: "/a/.wh.b", Kind: File}}, "reserved for whiteouts"},
		{"missing source", []Entry{{Path: "/a", Kind: File, Source: "/nonexistent/file"}}, "/a: open /nonexistent/file"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			_, err := NewCache(Options{MTime: epoch, CacheDir: t.TempDir()}).Build(row.entries)
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("Build = %v, want an error containing %q", err, row.want)
			}
		})
	}
}

func TestPlaceFollowsBaseSymlinksAndAddsParents(t *testing.T) {
	base := rootfs.New()
	base.Add("usr", rootfs.Node{Kind: rootfs.Dir, Mode: 0o755})
	base.Add("usr/sbin", rootfs.Node{Kind: rootfs.Dir, Mode: 0o755})
	base.Add("sbin", rootfs.Node{Kind: rootfs.Symlink, Link: "usr/sbin"})
	base.Add("run", rootfs.Node{Kind: rootfs.Dir, Mode: 0o755})
	base.Add("var", rootfs.Node{Kind: rootfs.Dir, Mode: 0o755})
	base.Add("var/run", rootfs.Node{Kind: rootfs.Symlink, Link: "../run"})
	base.Add("etc", rootfs.Node{Kind: rootfs.Dir, Mode: 0o755})
	base.Add("etc/passwd", rootfs.Node{Kind: rootfs.File, Mode: 0o644})

	got, err := Place([]Entry{
		{Path: "/sbin/mount.efs", Kind: File, Mode: 0o755},
		{Path: "/var/run/efs", Kind: Dir, Mode: 0o755},
		{Path: "/etc/amazon/efs/efs-utils.conf", Kind: File, Mode: 0o644},
	}, base)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range got {
		paths = append(paths, e.Kind.String()+":"+e.Path)
	}
	want := "dir:etc/amazon dir:etc/amazon/efs file:etc/amazon/efs/efs-utils.conf dir:run/efs file:usr/sbin/mount.efs"
	if strings.Join(paths, " ") != want {
		t.Fatalf("placed = %s\nwant     %s", strings.Join(paths, " "), want)
	}

	if _, err := Place([]Entry{{Path: "/etc/passwd/x", Kind: File}}, base); err == nil || !strings.Contains(err.Error(), "/etc/passwd exists in the base and is not a directory") {
		t.Fatalf("Place under a file = %v", err)
	}
	if _, err := Place([]Entry{{Path: "/sbin/x", Kind: File}, {Path: "/usr/sbin/x", Kind: File}}, base); err == nil || !strings.Contains(err.Error(), "already lands on /usr/sbin/x") {
		t.Fatalf("Place of two paths onto one = %v", err)
	}
}
