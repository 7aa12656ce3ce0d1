package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

// TestSourcesAgree keeps the one source of truth whole: the CSV, image-references (what ART reads), images.yaml
// and operator/VERSION say the same thing, so that `mage bundle`, the Konflux bundle build (which runs it) and ART
// build the same bundle.
func TestSourcesAgree(t *testing.T) {
	src := SourcesIn(workspacetest.Root(t))
	csv, err := CSVImages(filepath.Join(src.Manifests, CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := ImageReferences(filepath.Join(src.Manifests, ImageReferencesFile))
	if err != nil {
		t.Fatal(err)
	}
	images, err := ReadImages(filepath.Join(src.Manifests, ImagesFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != len(csv) || len(images) != len(csv) {
		t.Errorf("%d images in the CSV's relatedImages, %d in %s, %d in %s: want the same images in all three", len(csv), len(refs), ImageReferencesFile, len(images), ImagesFile)
	}
	for n, ref := range csv {
		if refs[n] != ref {
			t.Errorf("%s: the CSV has %s, %s has %q: a nudge or a hand edit changed one and not the other", n, ref, ImageReferencesFile, refs[n])
		}
		// Konflux nudges rewrite <repository>(:tag)?@sha256:[a-f0-9]+ of the component's repository only
		// (konflux-ci/build-service@ccde63a internal/controller/renovate_util.go:513).
		d, err := name.NewDigest(ref)
		if err != nil || d.Context().Name()+"@"+d.DigestStr() != ref {
			t.Errorf("%s: %q: want exactly <repository>@sha256:<digest>, the form nudges rewrite", n, ref)
		}
	}
	data, err := os.ReadFile(filepath.Join(workspacetest.Root(t), "operator", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(data))
	b := renderShipped(t, version)
	if b != readFile(t, filepath.Join(src.Manifests, CSVFile)) {
		t.Errorf("the CSV rendered at operator/VERSION %s differs from %s: the CSV's version must be operator/VERSION", version, CSVFile)
	}
}

// renderShipped renders the shipped CSV at version with the CSV's own references (no released-name mapping) and
// returns it.
func renderShipped(t *testing.T, version string) string {
	t.Helper()
	src := SourcesIn(workspacetest.Root(t))
	res, err := ResolveSources(src, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range res {
		res[i].Ref = res[i].Source
	}
	dir := t.TempDir()
	if err := Render(src, dir, Values{Version: version, Images: res}); err != nil {
		t.Fatal(err)
	}
	return readFile(t, filepath.Join(dir, "manifests", CSVFile))
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestArtRewritesOnlyTheVersion renders the CSV for a build version as ART would (art.yaml) and checks that the
// name, spec.version, skipRange and OPERATOR_IMAGE_VERSION change, and nothing else.
func TestArtRewritesOnlyTheVersion(t *testing.T) {
	plain := readFile(t, filepath.Join(SourcesIn(workspacetest.Root(t)).Manifests, CSVFile))
	built := renderShipped(t, "5.0.1-202608211803")
	pl, bl := strings.Split(plain, "\n"), strings.Split(built, "\n")
	if len(pl) != len(bl) {
		t.Fatalf("the rewrite changed the line count: %d, then %d", len(pl), len(bl))
	}
	var changed []string
	for i := range pl {
		if pl[i] != bl[i] {
			changed = append(changed, strings.TrimSpace(bl[i]))
		}
	}
	want := []string{
		"name: aws-efs-csi-driver-operator.v5.0.1-202608211803",
		"olm.skipRange: '>=4.9.0-0 <5.0.1-202608211803'",
		"version: 5.0.1-202608211803",
		"value: 5.0.1-202608211803",
	}
	if strings.Join(changed, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(changed, "\n"), strings.Join(want, "\n"))
	}
}

// TestMirrorSetMapsTheBuiltImagesToTheirReleasedNames: every image the CSV takes from a Konflux repository has a
// released name in the mirror set, on registry.redhat.io (Konflux's FBC validation refuses other registries for
// what a catalog ships: konflux-ci/konflux-operator-tasks@dee7049 task/validate-fbc/0.2, trusted_registry_regex).
func TestMirrorSetMapsTheBuiltImagesToTheirReleasedNames(t *testing.T) {
	res, err := ResolveSources(SourcesIn(workspacetest.Root(t)), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !strings.HasPrefix(r.Ref, "registry.redhat.io/") {
			t.Errorf("%s: the bundle would ship %s: want a registry.redhat.io name (add its repository to %s)", r.Placeholder, r.Ref, MirrorSetFile)
		}
	}
}

// TestNotRecorded is what `go tool mage konflux` reports: one line per placeholder digest, naming where it comes from.
func TestNotRecorded(t *testing.T) {
	lines, err := NotRecorded(workspacetest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := ResolveSources(SourcesIn(workspacetest.Root(t)), nil, "")
	if len(lines) != len(Unrecorded(res)) {
		t.Fatalf("NotRecorded %v, want one line per placeholder of %v", lines, Unrecorded(res))
	}
	for _, l := range lines {
		if !strings.Contains(l, "digest not recorded") {
			t.Errorf("%q does not say the digest is not recorded", l)
		}
	}
}
