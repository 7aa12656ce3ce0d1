package wheels

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheeltest"
)

// index is a PEP 503 simple index over real HTTP: /simple/<project>/ lists files, /files/<name> serves them.
type index struct {
	files map[string][]string // project -> file names
	blobs map[string][]byte
	// advertise controls whether links carry #sha256= fragments.
	advertise bool
	// lie replaces the advertised hash of a file.
	lie map[string]string
	// json serves PEP 691 JSON pages to clients that ask for them; otherwise PEP 503 HTML.
	json      bool
	downloads atomic.Int32
}

func (ix *index) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/files/"); ok {
		data, found := ix.blobs[name]
		if !found {
			http.NotFound(w, r)
			return
		}
		ix.downloads.Add(1)
		w.Write(data)
		return
	}
	project := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
	names, ok := ix.files[project]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if ix.json && strings.Contains(r.Header.Get("Accept"), "application/vnd.pypi.simple.v1+json") {
		ix.serveJSON(w, project, names)
		return
	}
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body><h1>Links for %s</h1>\n", project)
	for _, n := range names {
		frag := ""
		if ix.advertise {
			frag = "#sha256=" + wheeltest.SHA256(ix.blobs[n])
			if l, ok := ix.lie[n]; ok {
				frag = "#sha256=" + l
			}
		}
		fmt.Fprintf(w, "<a href=\"../../files/%s%s\" data-requires-python=\"&gt;=3.8\">%s</a><br/>\n", n, frag, n)
	}
	fmt.Fprint(w, "</body></html>\n")
}

func (ix *index) advertised(name string) string {
	if !ix.advertise {
		return ""
	}
	if l, ok := ix.lie[name]; ok {
		return l
	}
	return wheeltest.SHA256(ix.blobs[name])
}

func (ix *index) serveJSON(w http.ResponseWriter, project string, names []string) {
	type file struct {
		Filename string            `json:"filename"`
		URL      string            `json:"url"`
		Hashes   map[string]string `json:"hashes"`
	}
	page := struct {
		Meta  map[string]string `json:"meta"`
		Name  string            `json:"name"`
		Files []file            `json:"files"`
	}{Meta: map[string]string{"api-version": "1.1"}, Name: project}
	for _, n := range names {
		f := file{Filename: n, URL: "../../files/" + n, Hashes: map[string]string{}}
		if h := ix.advertised(n); h != "" {
			f.Hashes["sha256"] = h
		}
		page.Files = append(page.Files, f)
	}
	w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
	json.NewEncoder(w).Encode(page)
}

func newIndex(t *testing.T) (*index, string) {
	t.Helper()
	ix := &index{files: map[string][]string{}, blobs: map[string][]byte{}, advertise: true, lie: map[string]string{}}
	add := func(project, name string, data []byte) {
		ix.files[project] = append(ix.files[project], name)
		ix.blobs[name] = data
	}
	boto := wheeltest.Wheel{Project: "botocore", Version: "1.34.140", Files: map[string]string{"botocore/__init__.py": "__version__ = '1.34.140'\n"}}
	add("botocore", "botocore-1.34.140.tar.gz", []byte("an sdist"))
	add("botocore", boto.Filename(), boto.Bytes())
	add("botocore", "botocore-1.34.139-py3-none-any.whl", []byte("older"))
	six := wheeltest.Wheel{Project: "six", Version: "1.15.0", Tags: "py2.py3-none-any", Files: map[string]string{"six.py": "# six\n"}}
	add("six", six.Filename(), six.Bytes())
	add("native", "native-1.0-cp39-cp39-manylinux_2_17_x86_64.whl", []byte("elf"))
	add("sdistonly", "sdistonly-1.0.tar.gz", []byte("source"))
	srv := httptest.NewServer(ix)
	t.Cleanup(srv.Close)
	return ix, srv.URL + "/simple"
}

func pin(t *testing.T, line string) []Requirement {
	t.Helper()
	reqs, err := ParseRequirements("requirements.txt.ocp", line)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

func TestFetchDownloadsVerifiesAndReuses(t *testing.T) {
	for _, form := range []string{"PEP 503 HTML", "PEP 691 JSON"} {
		t.Run(form, func(t *testing.T) { testFetch(t, form == "PEP 691 JSON") })
	}
}

func testFetch(t *testing.T, json bool) {
	ix, url := newIndex(t)
	ix.json = json
	boto := "botocore-1.34.140-py3-none-any.whl"
	six := "six-1.15.0-py2.py3-none-any.whl"
	reqs := pin(t, fmt.Sprintf("botocore==1.34.140 --hash=sha256:%s --hash=sha256:%s\nsix==1.15.0 --hash=sha256:%s\n",
		wheeltest.SHA256(ix.blobs["botocore-1.34.140.tar.gz"]), wheeltest.SHA256(ix.blobs[boto]), wheeltest.SHA256(ix.blobs[six])))
	dir := t.TempDir()
	var progress strings.Builder
	got, err := Fetch(t.Context(), reqs, Options{IndexURL: url, Dir: dir, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(got[0].Path) != boto || filepath.Base(got[1].Path) != six {
		t.Fatalf("fetched %s, %s", got[0].Path, got[1].Path)
	}
	if n := ix.downloads.Load(); n != 2 {
		t.Errorf("%d downloads, want 2 (the wheels, not the sdist)", n)
	}
	if !strings.Contains(progress.String(), "botocore==1.34.140: "+boto+" downloaded and verified") {
		t.Errorf("progress:\n%s", progress.String())
	}
	// Second fetch: everything is there and verified, no network at all.
	if _, err := Fetch(t.Context(), reqs, Options{IndexURL: "http://127.0.0.1:1/unreachable", Dir: dir}); err != nil {
		t.Fatalf("second fetch needed the index: %v", err)
	}
	local, err := Local(reqs, dir)
	if err != nil || len(local) != 2 {
		t.Fatalf("Local = %v, %v", local, err)
	}
	// A wheel changed on disk is no longer trusted.
	if err := os.WriteFile(got[1].Path, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Local(reqs, dir); err == nil || !strings.Contains(err.Error(), "six==1.15.0 (line 2): no file with a pinned hash") {
		t.Fatalf("Local with a tampered wheel = %v", err)
	}
}

func TestFetchRefuses(t *testing.T) {
	ix, url := newIndex(t)
	boto := "botocore-1.34.140-py3-none-any.whl"
	rows := []struct {
		name      string
		req       string
		advertise bool
		lie       string
		want      string
	}{
		{"wrong hash, index advertises the real one", "botocore==1.34.140 --hash=sha256:" + hashB, true, "",
			"none of the 2 files the index lists for this version is a pure-Python wheel or a source distribution with a pinned hash"},
		{"wrong hash, index advertises none", "botocore==1.34.140 --hash=sha256:" + hashB, false, "",
			"botocore-1.34.140.tar.gz has sha256 " + wheeltest.SHA256(ix.blobs["botocore-1.34.140.tar.gz"]) + ", which is not among the pinned hashes"},
		{"index lies about the hash", "botocore==1.34.140 --hash=sha256:" + hashB, true, hashB,
			"which is not among the pinned hashes"},
		{"platform wheel", "native==1.0 --hash=sha256:" + wheeltest.SHA256(ix.blobs["native-1.0-cp39-cp39-manylinux_2_17_x86_64.whl"]), true, "",
			"none of the 1 files the index lists for this version is a pure-Python wheel or a source distribution"},
		{"version not on the index", "botocore==9.9.9 --hash=sha256:" + hashA, true, "", "the index lists no file of version 9.9.9"},
		{"project not on the index", "nothere==1.0 --hash=sha256:" + hashA, true, "", "404 Not Found"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			ix.advertise = row.advertise
			ix.lie = map[string]string{}
			if row.lie != "" {
				ix.lie[boto] = row.lie
			}
			dir := t.TempDir()
			_, err := Fetch(t.Context(), pin(t, row.req), Options{IndexURL: url, Dir: dir})
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("Fetch = %v\nwant an error containing %q", err, row.want)
			}
			left, _ := os.ReadDir(dir)
			if len(left) != 0 {
				t.Errorf("a refused fetch left %v behind", left)
			}
		})
	}
}

// TestFetchTakesThePinnedSdist: the committed requirements pin botocore's sdist only; Fetch takes the sdist
// (pybuild turns it into a wheel) and prefers a wheel only when a wheel is pinned too.
func TestFetchTakesThePinnedSdist(t *testing.T) {
	ix, url := newIndex(t)
	for _, json := range []bool{false, true} {
		ix.json = json
		dir := t.TempDir()
		got, err := Fetch(t.Context(), pin(t, "botocore==1.34.140 --hash=sha256:"+wheeltest.SHA256(ix.blobs["botocore-1.34.140.tar.gz"])+
			"\nsdistonly==1.0 --hash=sha256:"+wheeltest.SHA256(ix.blobs["sdistonly-1.0.tar.gz"])), Options{IndexURL: url, Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(got[0].Path) != "botocore-1.34.140.tar.gz" || !got[0].Sdist || filepath.Base(got[1].Path) != "sdistonly-1.0.tar.gz" || !got[1].Sdist {
			t.Fatalf("Fetch = %+v", got)
		}
		local, err := Local([]Requirement{got[0].Requirement}, dir)
		if err != nil || !local[0].Sdist || local[0].SHA256 != got[0].SHA256 {
			t.Fatalf("Local = %+v, %v", local, err)
		}
	}
}

// TestCommittedRequirementsRefuseAStandIn: the repository's requirements.txt.ocp pins the real botocore sdist; a
// stand-in sdist under the same name is refused, so a stand-in can never slip into an image built from it.
func TestCommittedRequirementsRefuseAStandIn(t *testing.T) {
	_, url := newIndex(t)
	reqs, err := (Env{Requirements: "../../../requirements.txt.ocp"}).requirements()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Fetch(t.Context(), reqs, Options{IndexURL: url, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "none of the 2 files the index lists for this version is a pure-Python wheel or a source distribution with a pinned hash") {
		t.Fatalf("Fetch of the committed pins from a stand-in index = %v", err)
	}
}

// TestAnotherRequirementsFileIsAnnounced: WHEELS_REQUIREMENTS naming any file but the committed one makes the
// fetch say that what it builds is not what a release ships; the committed file is not announced.
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
		if _, err := e.FetchAll(t.Context(), nil, &out); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "WARNING: WHEELS_REQUIREMENTS="+other+" replaces the committed requirements.txt.ocp"); got != want {
			t.Errorf("WHEELS_REQUIREMENTS=%q: warned %v, want %v (output %q)", env, got, want, out.String())
		}
	}
}

func TestLockRecomputesHashesAndKeepsOtherLines(t *testing.T) {
	ix, url := newIndex(t)
	content := "# Python requirements of efs-utils on RHEL 9\n# six: RPM python3-six\n" +
		"botocore==1.34.140 \\\n    --hash=sha256:" + hashB + "  # borrowed from efs-utils 2.3.0\nsix==1.15.0\n# end\n"
	got, err := Lock(t.Context(), "requirements.txt.ocp", content, Options{IndexURL: url})
	if err != nil {
		t.Fatal(err)
	}
	sums := []string{wheeltest.SHA256(ix.blobs["botocore-1.34.140.tar.gz"]), wheeltest.SHA256(ix.blobs["botocore-1.34.140-py3-none-any.whl"])}
	if sums[0] > sums[1] {
		sums[0], sums[1] = sums[1], sums[0]
	}
	want := "# Python requirements of efs-utils on RHEL 9\n# six: RPM python3-six\n" +
		"# borrowed from efs-utils 2.3.0\nbotocore==1.34.140 \\\n    --hash=sha256:" + sums[0] + " \\\n    --hash=sha256:" + sums[1] + "\n" +
		"six==1.15.0 \\\n    --hash=sha256:" + wheeltest.SHA256(ix.blobs["six-1.15.0-py2.py3-none-any.whl"]) + "\n# end\n"
	if got != want {
		t.Fatalf("Lock wrote\n%s\nwant\n%s", got, want)
	}
	// The locked file is accepted by the strict parser, and locking again changes nothing.
	if _, err := ParseRequirements("locked", got); err != nil {
		t.Fatal(err)
	}
	again, err := Lock(t.Context(), "requirements.txt.ocp", got, Options{IndexURL: url})
	if err != nil || again != got {
		t.Fatalf("second lock changed the file (%v):\n%s", err, again)
	}

	ix.lie["six-1.15.0-py2.py3-none-any.whl"] = hashA
	if _, err := Lock(t.Context(), "r", "six==1.15.0\n", Options{IndexURL: url}); err == nil || !strings.Contains(err.Error(), "but the index advertises sha256:"+hashA) {
		t.Fatalf("Lock against a lying index = %v", err)
	}
	if _, err := Lock(t.Context(), "r", "six>=1\n", Options{IndexURL: url}); err == nil || !strings.Contains(err.Error(), "is not pinned") {
		t.Fatalf("Lock of an unpinned line = %v", err)
	}
}
