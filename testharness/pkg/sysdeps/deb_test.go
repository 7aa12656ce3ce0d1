package sysdeps

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// buildDeb makes a real .deb with dpkg-deb --build holding one Python module.
func buildDeb(t *testing.T) []byte {
	t.Helper()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Fatalf("dpkg-deb (Debian package dpkg) is needed: %v", err)
	}
	src := t.TempDir()
	files := map[string]string{
		"DEBIAN/control": "Package: python3-demo\nVersion: 1.2-1\nArchitecture: all\nMaintainer: test <t@example.com>\nDescription: demo\n",
		"usr/lib/python3/dist-packages/demo/__init__.py": "__version__ = '1.2'\n",
	}
	for name, content := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "demo.deb")
	if data, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", src, out).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v\n%s", err, data)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestUnpackVerifiesAndCaches: the .deb comes from an archive over real HTTP on loopback, laid out as Debian's
// pool; the pinned sha256 is checked, the files are unpacked, and a second call needs no archive.
func TestUnpackVerifiesAndCaches(t *testing.T) {
	data := buildDeb(t)
	sum := sha256.Sum256(data)
	d := Deb{Package: "python3-demo", Version: "1.2-1", Arch: "all", Pool: "p/python-demo", SHA256: hex.EncodeToString(sum[:])}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/debian/pool/main/p/python-demo/python3-demo_1.2-1_all.deb" {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	mirror := srv.URL + "/debian"
	dir := t.TempDir()

	wrong := d
	wrong.SHA256 = strings.Repeat("0", 64)
	if _, err := Unpack(t.Context(), wrong, mirror, dir, io.Discard); err == nil || !strings.Contains(err.Error(), "want the pinned "+wrong.SHA256+": refusing it") {
		t.Fatalf("Unpack with another pin = %v", err)
	}
	missing := d
	missing.Version = "9.9-1"
	if _, err := Unpack(t.Context(), missing, mirror, dir, io.Discard); err == nil || !strings.Contains(err.Error(), "404 Not Found") {
		t.Fatalf("Unpack of a version the archive lacks = %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("refused downloads left %v", left)
	}

	got, err := Unpack(t.Context(), d, mirror, dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if content, err := os.ReadFile(filepath.Join(got, "usr/lib/python3/dist-packages/demo/__init__.py")); err != nil || string(content) != "__version__ = '1.2'\n" {
		t.Fatalf("unpacked module = %q, %v", content, err)
	}
	srv.Close()
	again, err := Unpack(t.Context(), d, mirror, dir, io.Discard)
	if err != nil || again != got {
		t.Fatalf("second Unpack without the archive = %s, %v; want %s", again, err, got)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("%d archive requests, want one per call before the cache (3)", n)
	}
}
