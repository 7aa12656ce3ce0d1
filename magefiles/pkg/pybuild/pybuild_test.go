package pybuild

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheelinstall"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheels"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheeltest"
)

var mtime = time.Unix(1767225600, 0).UTC()

// standIn is a botocore-shaped sdist: a package with a submodule and JSON package data. The real sdist is on
// PyPI, which this machine cannot reach; its hash stays pinned in requirements.txt.ocp.
var standIn = wheeltest.Sdist{Project: "botocore", Version: "1.34.140", Files: map[string]string{
	"botocore/__init__.py":           "__version__ = '1.34.140'\n",
	"botocore/session.py":            "def get_session():\n    return None\n",
	"botocore/data/endpoints.json":   "{\"partitions\": []}\n",
	"botocore/data/efs/service.json": "{}\n",
}}

// simpleIndex serves one sdist over real HTTP as a PEP 503 page.
func simpleIndex(t *testing.T, name string, data []byte) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/botocore/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html><body><a href=\"/files/%s#sha256=%s\">%s</a></body></html>\n", name, wheeltest.SHA256(data), name)
	})
	mux.HandleFunc("/files/"+name, func(w http.ResponseWriter, r *http.Request) { w.Write(data) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/simple"
}

// installedLayer fetches the pinned sdist from the index, builds its wheel in cacheDir and returns the digest of
// the layer that installs it, with the wheel's path.
func installedLayer(t *testing.T, indexURL, pin, cacheDir string) (string, string) {
	t.Helper()
	reqs, err := wheels.ParseRequirements("requirements.txt.ocp", pin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wheels.Fetch(t.Context(), reqs, wheels.Options{IndexURL: indexURL, Dir: filepath.Join(cacheDir, "dists")})
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].Sdist {
		t.Fatalf("fetched %s, want the sdist", got[0].Path)
	}
	ws, err := Builder{CacheDir: filepath.Join(cacheDir, "built"), MTime: mtime}.Installable(t.Context(), got)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(ws[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	entries, err := wheelinstall.Install(filepath.Base(ws[0]), f, info.Size(), wheelinstall.Target{
		SitePackages: "usr/local/lib/python3.9/site-packages", Prefix: "usr/local", Interpreter: "/usr/bin/python3.9"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	for _, want := range []string{"usr/local/lib/python3.9/site-packages/botocore/session.py", "usr/local/lib/python3.9/site-packages/botocore/data/efs/service.json"} {
		if !strings.Contains(strings.Join(paths, "\n"), want) {
			t.Fatalf("the installed wheel lacks %s:\n%s", want, strings.Join(paths, "\n"))
		}
	}
	placed, err := layer.Place(entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := layer.NewCache(layer.Options{MTime: mtime, CacheDir: t.TempDir()}).Build(placed)
	if err != nil {
		t.Fatal(err)
	}
	d, err := res.Layer.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String(), ws[0]
}

// TestSdistBecomesTheSameLayerEveryTime: the stand-in sdist from a local PEP 503 index is verified, built into a
// wheel by the host's pip/setuptools/wheel and installed; two builds in separate caches give the same layer.
func TestSdistBecomesTheSameLayerEveryTime(t *testing.T) {
	t.Parallel()
	data := standIn.Bytes()
	url := simpleIndex(t, standIn.Filename(), data)
	pin := "botocore==1.34.140 --hash=sha256:" + wheeltest.SHA256(data)
	first, wheel := installedLayer(t, url, pin, t.TempDir())
	second, _ := installedLayer(t, url, pin, t.TempDir())
	if first != second {
		t.Fatalf("two builds of the same sdist gave layers %s and %s", first, second)
	}
	if filepath.Base(filepath.Dir(wheel)) != wheeltest.SHA256(data) || filepath.Base(wheel) != "botocore-1.34.140-py3-none-any.whl" {
		t.Fatalf("the wheel is kept at %s, want built/<sdist sha256>/botocore-1.34.140-py3-none-any.whl", wheel)
	}
}

// TestWheelIsCachedBySdistHash: a second Wheel call for the same sdist hash does not run Python at all.
func TestWheelIsCachedBySdistHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := standIn.Bytes()
	sdist := filepath.Join(dir, standIn.Filename())
	if err := os.WriteFile(sdist, data, 0o644); err != nil {
		t.Fatal(err)
	}
	v := wheels.Verified{Requirement: wheels.Requirement{Name: "botocore", Version: "1.34.140"}, Path: sdist, SHA256: wheeltest.SHA256(data), Sdist: true}
	b := Builder{CacheDir: filepath.Join(dir, "built"), MTime: mtime}
	w1, err := b.Wheel(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	b.Python = filepath.Join(dir, "no-python-here")
	w2, err := b.Wheel(t.Context(), v)
	if err != nil || w2 != w1 {
		t.Fatalf("cached Wheel = %s, %v; want %s without building", w2, err, w1)
	}
	// Another sdist hash is not served from that cache, and the missing interpreter is named.
	v.SHA256 = strings.Repeat("0", 64)
	if _, err := b.Wheel(t.Context(), v); err == nil || !strings.Contains(err.Error(), "no-python-here, which lacks pip, setuptools or wheel") {
		t.Fatalf("Wheel with no interpreter = %v", err)
	}
}

// TestBuiltWheelMustMatchThePin: an sdist that builds a wheel of another version than pinned is refused, and
// nothing is cached for it.
func TestBuiltWheelMustMatchThePin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other := standIn
	other.Version = "1.34.141"
	data := other.Bytes()
	sdist := filepath.Join(dir, "botocore-1.34.140.tar.gz")
	if err := os.WriteFile(sdist, data, 0o644); err != nil {
		t.Fatal(err)
	}
	v := wheels.Verified{Requirement: wheels.Requirement{Name: "botocore", Version: "1.34.140"}, Path: sdist, SHA256: wheeltest.SHA256(data), Sdist: true}
	_, err := Builder{CacheDir: filepath.Join(dir, "built"), MTime: mtime}.Wheel(t.Context(), v)
	if err == nil || !strings.Contains(err.Error(), "built botocore-1.34.141-py3-none-any.whl, another project or version") {
		t.Fatalf("Wheel = %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "built", "*")); len(left) != 0 {
		t.Fatalf("a refused build left %v in the cache", left)
	}
}
