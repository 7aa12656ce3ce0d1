package wheels

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheeltest"
)

// standIn is a botocore-shaped sdist: a package with a submodule and JSON package data. The real sdist is on
// PyPI, which this machine cannot reach; its hash stays pinned in requirements.txt.ocp.
var standIn = wheeltest.Sdist{Project: "botocore", Version: "1.34.140", Files: map[string]string{
	"botocore/__init__.py":           "__version__ = '1.34.140'\n",
	"botocore/session.py":            "def get_session():\n    return None\n",
	"botocore/data/endpoints.json":   "{\"partitions\": []}\n",
	"botocore/data/efs/service.json": "{}\n",
}}

var six = wheeltest.Wheel{Project: "six", Version: "1.15.0", Tags: "py2.py3-none-any", Files: map[string]string{"six.py": "# six\n"}}

// index is a PEP 503 simple index over real HTTP on loopback, the way pip reads PyPI: /simple/<project>/ links
// each file with its #sha256= fragment, /files/<name> serves it.
type index struct {
	// mu orders the test's edits before pip's requests: pip is another process, so the race detector sees no
	// happens-before edge between the test goroutine and the server's handler without it.
	mu    sync.Mutex
	files map[string][]string // project -> file names
	blobs map[string][]byte
	lie   map[string]string // file name -> the hash advertised instead of the real one
	url   string
}

func (ix *index) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if name, ok := strings.CutPrefix(r.URL.Path, "/files/"); ok {
		if data, found := ix.blobs[name]; found {
			w.Write(data)
			return
		}
		http.NotFound(w, r)
		return
	}
	names, ok := ix.files[strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, "<!DOCTYPE html>\n<html><body>\n")
	for _, n := range names {
		sum := wheeltest.SHA256(ix.blobs[n])
		if l, ok := ix.lie[n]; ok {
			sum = l
		}
		fmt.Fprintf(w, "<a href=\"../../files/%s#sha256=%s\" data-requires-python=\"&gt;=3.8\">%s</a><br/>\n", n, sum, n)
	}
	fmt.Fprint(w, "</body></html>\n")
}

func (ix *index) add(project, name string, data []byte) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.files[project] = append(ix.files[project], name)
	ix.blobs[name] = data
}

// sum is the sha256 of a file the index serves.
func (ix *index) sum(name string) string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return wheeltest.SHA256(ix.blobs[name])
}

// advertise makes the index announce hash for the file name instead of its real one.
func (ix *index) advertise(name, hash string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.lie[name] = hash
}

func newIndex(t *testing.T) *index {
	t.Helper()
	ix := &index{files: map[string][]string{}, blobs: map[string][]byte{}, lie: map[string]string{}}
	ix.add("botocore", standIn.Filename(), standIn.Bytes())
	ix.add("six", six.Filename(), six.Bytes())
	ix.add("native", "native-1.0-cp39-cp39-manylinux_2_17_x86_64.whl", []byte("elf"))
	srv := httptest.NewServer(ix)
	t.Cleanup(srv.Close)
	ix.url = srv.URL + "/simple"
	return ix
}

// env writes content as the requirements file of a fresh output directory.
func env(t *testing.T, indexURL, content string) Env {
	t.Helper()
	root := t.TempDir()
	e := ReadEnv(root, func(k string) string { return map[string]string{"WHEELS_INDEX_URL": indexURL}[k] })
	if err := os.WriteFile(e.Requirements, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (ix *index) pins() string {
	return "botocore==1.34.140 --hash=sha256:" + ix.sum(standIn.Filename()) + "\nsix==1.15.0 --hash=sha256:" + ix.sum(six.Filename()) + "\n"
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestDownloadVerifiesAndThenWorksOffline: pip takes the pinned sdist and wheel from the index; once they are in
// _output/wheels, a second run finds them there with the index gone.
func TestDownloadVerifiesAndThenWorksOffline(t *testing.T) {
	ix := newIndex(t)
	e := env(t, ix.url, ix.pins())
	var out strings.Builder
	if err := e.Download(t.Context(), Pip{}, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(files(t, e.Dir), " "); got != "botocore-1.34.140.tar.gz six-1.15.0-py2.py3-none-any.whl" {
		t.Fatalf("downloaded %s", got)
	}
	e.IndexURL = "http://127.0.0.1:1/simple" // nothing listens there
	out.Reset()
	if err := e.Download(t.Context(), Pip{}, &out); err != nil {
		t.Fatalf("second Download without an index: %v", err)
	}
	if !strings.Contains(out.String(), "File was already downloaded") {
		t.Errorf("second Download said:\n%s", out.String())
	}
}

func TestDownloadRefuses(t *testing.T) {
	ix := newIndex(t)
	ix.add("liar", "liar-1.0-py3-none-any.whl", wheeltest.Wheel{Project: "liar", Version: "1.0"}.Bytes())
	ix.advertise("liar-1.0-py3-none-any.whl", hashB)
	rows := []struct {
		name, content, want string
	}{
		{"wrong hash", "botocore==1.34.140 --hash=sha256:" + hashB, "DO NOT MATCH THE HASHES"},
		{"index advertises another hash", "liar==1.0 --hash=sha256:" + hashB, "DO NOT MATCH THE HASHES"},
		{"platform wheel only", "native==1.0 --hash=sha256:" + ix.sum("native-1.0-cp39-cp39-manylinux_2_17_x86_64.whl"), "No matching distribution found for native==1.0"},
		{"unpinned, refused before pip runs", "botocore>=1.34 --hash=sha256:" + hashA, `"botocore>=1.34" is not pinned`},
		{"an index option in the file", "--index-url http://example.com/simple\n", `"--index-url": options are not accepted`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			e := env(t, ix.url, row.content)
			err := e.Download(t.Context(), Pip{}, io.Discard)
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("Download = %v\nwant an error containing %q", err, row.want)
			}
			if left := files(t, e.Dir); len(left) != 0 {
				t.Errorf("a refused download left %v behind", left)
			}
		})
	}
}

// TestCommittedRequirementsRefuseAStandIn: the repository's requirements.txt.ocp pins the real botocore sdist; a
// stand-in sdist under the same name is refused, so a stand-in can never slip into an image built from it.
func TestCommittedRequirementsRefuseAStandIn(t *testing.T) {
	ix := newIndex(t)
	e := env(t, ix.url, "")
	e.Requirements = "../../../requirements.txt.ocp"
	if err := e.Download(t.Context(), Pip{}, io.Discard); err == nil || !strings.Contains(err.Error(), "DO NOT MATCH THE HASHES") {
		t.Fatalf("Download of the committed pins from a stand-in index = %v", err)
	}
}

// TestAnotherRequirementsFileIsAnnounced: WHEELS_REQUIREMENTS naming any file but the committed one makes the
// download say that what it builds is not what a release ships; the committed file is not announced.
func TestAnotherRequirementsFileIsAnnounced(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(root, "stand-in.txt")
	for _, f := range []string{other, filepath.Join(root, "requirements.txt.ocp")} {
		if err := os.WriteFile(f, []byte("# no requirements\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for env, want := range map[string]bool{"": false, other: true} {
		var out strings.Builder
		e := ReadEnv(root, func(k string) string { return map[string]string{"WHEELS_REQUIREMENTS": env}[k] })
		if err := e.Download(t.Context(), Pip{}, &out); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "WARNING: WHEELS_REQUIREMENTS="+other+" replaces the committed requirements.txt.ocp"); got != want {
			t.Errorf("WHEELS_REQUIREMENTS=%q: warned %v, want %v (output %q)", env, got, want, out.String())
		}
	}
}

var mtime = time.Unix(1767225600, 0).UTC()

// installedLayer downloads the pins, builds their wheels and installs them for Python 3.9 in a fresh output
// directory, and returns the digest of the layer of that tree, with the wheels and the tree's directory.
func installedLayer(t *testing.T, ix *index) (string, []string, string) {
	t.Helper()
	e := env(t, ix.url, ix.pins())
	pip := Pip{SourceDateEpoch: mtime.Unix()}
	if err := e.Download(t.Context(), pip, io.Discard); err != nil {
		t.Fatal(err)
	}
	built, err := e.Build(t.Context(), pip)
	if err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(t.TempDir(), "site-packages")
	if err := Install(t.Context(), pip, built, 9, site); err != nil {
		t.Fatal(err)
	}
	entries, err := layer.Tree(site, "usr/local/lib/python3.9/site-packages")
	if err != nil {
		t.Fatal(err)
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
	return d.String(), built, site
}

// TestSdistBecomesTheSameLayerEveryTime: the stand-in sdist from the local index is verified and built into a wheel
// by pip with the host's setuptools, and installed with the pinned wheel; two runs in fresh directories give the
// same layer.
func TestSdistBecomesTheSameLayerEveryTime(t *testing.T) {
	ix := newIndex(t)
	first, built, site := installedLayer(t, ix)
	second, _, _ := installedLayer(t, ix)
	if first != second {
		t.Fatalf("two builds of the same pins gave layers %s and %s", first, second)
	}
	if got := filepath.Base(built[0]) + " " + filepath.Base(built[1]); got != "botocore-1.34.140-py3-none-any.whl six-1.15.0-py2.py3-none-any.whl" {
		t.Fatalf("built %s", got)
	}
	for _, want := range []string{"botocore/session.py", "botocore/data/efs/service.json", "botocore-1.34.140.dist-info/RECORD", "six.py"} {
		if _, err := os.Stat(filepath.Join(site, want)); err != nil {
			t.Errorf("the installed tree lacks %s: %v", want, err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(site, "*", "direct_url.json")); len(m) != 0 {
		t.Errorf("pip recorded the wheels' local paths: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(site, "*", "__pycache__")); len(m) != 0 {
		t.Errorf("pip compiled bytecode into the layer: %v", m)
	}
}

// TestBuildIsCachedPerRequirementsFile: a second Build of the same file does not run Python at all; another file
// is not served from that cache, and the interpreter that cannot build is named.
func TestBuildIsCachedPerRequirementsFile(t *testing.T) {
	ix := newIndex(t)
	e := env(t, ix.url, ix.pins())
	if err := e.Download(t.Context(), Pip{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	first, err := e.Build(t.Context(), Pip{})
	if err != nil {
		t.Fatal(err)
	}
	nowhere := Pip{Python: filepath.Join(t.TempDir(), "no-python-here")}
	again, err := e.Build(t.Context(), nowhere)
	if err != nil || strings.Join(again, " ") != strings.Join(first, " ") {
		t.Fatalf("cached Build = %v, %v; want %v without building", again, err, first)
	}
	if err := os.WriteFile(e.Requirements, []byte("# changed\n"+ix.pins()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Build(t.Context(), nowhere); err == nil || !strings.Contains(err.Error(), "no-python-here lacks one of the Python modules setuptools, wheel, pip") {
		t.Fatalf("Build with no interpreter = %v", err)
	}
}

// TestBuildRefusesAnSdistOfAnotherVersion: an sdist whose metadata says another version than pinned builds no
// wheel, and nothing is cached for it.
func TestBuildRefusesAnSdistOfAnotherVersion(t *testing.T) {
	other := standIn
	other.Version = "1.34.141"
	e := env(t, "http://127.0.0.1:1/simple", "")
	data := other.Bytes()
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "botocore-1.34.140.tar.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.Requirements, []byte("botocore==1.34.140 --hash=sha256:"+wheeltest.SHA256(data)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Build(t.Context(), Pip{}); err == nil || !strings.Contains(err.Error(), "1.34.141") {
		t.Fatalf("Build = %v, want an error naming the sdist's version", err)
	}
	if left := files(t, e.BuiltDir); len(left) != 0 {
		t.Fatalf("a refused build left %v in the cache", left)
	}
}

// TestInstallRefusesScripts: pip would write a console script with the build host's interpreter in its shebang.
func TestInstallRefusesScripts(t *testing.T) {
	w := wheeltest.Wheel{Project: "tool", Version: "1.0", Files: map[string]string{
		"tool/__init__.py": "", "tool-1.0.data/scripts/tool*": "#!python\nprint('hi')\n"}}
	dir := t.TempDir()
	path := filepath.Join(dir, w.Filename())
	if err := os.WriteFile(path, w.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Install(t.Context(), Pip{}, []string{path}, 9, filepath.Join(dir, "site"))
	if err == nil || !strings.Contains(err.Error(), "a wheel installs bin/ (console scripts or data files)") {
		t.Fatalf("Install = %v", err)
	}
}

func TestLockRecomputesHashesAndKeepsOtherLines(t *testing.T) {
	ix := newIndex(t)
	boto := wheeltest.Wheel{Project: "botocore", Version: "1.34.140", Files: map[string]string{"botocore/__init__.py": "\n"}}
	ix.add("botocore", boto.Filename(), boto.Bytes())
	content := "# Python requirements of efs-utils on RHEL 9\n# six: RPM python3-six\n" +
		"botocore==1.34.140 \\\n    --hash=sha256:" + hashB + "  # borrowed from efs-utils 2.3.0\nsix==1.15.0\n# end\n"
	got, err := Lock(t.Context(), Pip{}, "requirements.txt.ocp", content, ix.url, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sums := []string{ix.sum(standIn.Filename()), ix.sum(boto.Filename())}
	if sums[0] > sums[1] {
		sums[0], sums[1] = sums[1], sums[0]
	}
	want := "# Python requirements of efs-utils on RHEL 9\n# six: RPM python3-six\n" +
		"# borrowed from efs-utils 2.3.0\nbotocore==1.34.140 \\\n    --hash=sha256:" + sums[0] + " \\\n    --hash=sha256:" + sums[1] + "\n" +
		"six==1.15.0 \\\n    --hash=sha256:" + ix.sum(six.Filename()) + "\n# end\n"
	if got != want {
		t.Fatalf("Lock wrote\n%s\nwant\n%s", got, want)
	}
	// The locked file is accepted by the strict parser, and locking again changes nothing.
	if _, err := ParseRequirements("locked", got); err != nil {
		t.Fatal(err)
	}
	again, err := Lock(t.Context(), Pip{}, "requirements.txt.ocp", got, ix.url, io.Discard)
	if err != nil || again != got {
		t.Fatalf("second lock changed the file (%v):\n%s", err, again)
	}

	ix.advertise(six.Filename(), hashA)
	if _, err := Lock(t.Context(), Pip{}, "r", "six==1.15.0\n", ix.url, io.Discard); err == nil || !strings.Contains(err.Error(), "Expected sha256 "+hashA) {
		t.Fatalf("Lock against a lying index = %v", err)
	}
	if _, err := Lock(t.Context(), Pip{}, "r", "native==1.0\n", ix.url, io.Discard); err == nil || !strings.Contains(err.Error(), "has neither an sdist nor a pure-Python wheel of version 1.0") {
		t.Fatalf("Lock of a platform-only project = %v", err)
	}
	if _, err := Lock(t.Context(), Pip{}, "r", "six>=1\n", ix.url, io.Discard); err == nil || !strings.Contains(err.Error(), "is not pinned") {
		t.Fatalf("Lock of an unpinned line = %v", err)
	}
}
