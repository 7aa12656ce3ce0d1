package catalog

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

var testTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// startRegistry runs go-containerregistry's registry over real HTTP on a loopback TCP listener.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// pinImages pushes one small random image per bundle image to the registry and returns their digest pins.
func pinImages(t *testing.T, reg string) map[string]string {
	t.Helper()
	images, err := bundle.ReadImages(filepath.Join(workspacetest.Root(t), "operator", "manifests", bundle.ImagesFile))
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for _, im := range images {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(reg + "/test/" + im.RelatedImage + ":v1")
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(tag, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		pins[im.Placeholder] = tag.Context().Name() + "@" + d.String()
	}
	return pins
}

// pushBundle renders, validates, builds and pushes the bundle of the shipped manifests at version.
func pushBundle(t *testing.T, reg, version string, pins map[string]string) (dir, ref string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "bundle")
	res, err := bundle.Run(t.Context(), bundle.Options{
		Sources: bundle.SourcesIn(workspacetest.Root(t)), OutDir: dir, ImageOutDir: t.TempDir(),
		Stamp: stamp.Stamp{Version: version, Commit: "0123456789abcdef0123456789abcdef01234567"}, MTime: testTime,
		Pins: pins, RequireDigests: true, Platforms: platform.Supported(), Registry: reg + "/test", K8sVersion: "1.36",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Image.Reference == "" {
		t.Fatal("the bundle image was not pushed")
	}
	return dir, res.Image.Reference
}

// canonical sorts a list of JSON values by their encoding.
func canonical(t *testing.T, v any) []string {
	t.Helper()
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

func TestBundleAndCatalogAgainstOPM(t *testing.T) {
	reg := startRegistry(t)
	pins := pinImages(t, reg)
	dir1, ref1 := pushBundle(t, reg, "v1.0.0", pins)

	// opm render pulls the pushed bundle image from the loopback registry; our olm.bundle must say the same.
	var rendered map[string]any
	if err := json.Unmarshal(runOPM(t, "render", ref1, "--use-http", "-o", "json"), &rendered); err != nil {
		t.Fatal(err)
	}
	ours, err := RenderBundle(dir1, ref1)
	if err != nil {
		t.Fatal(err)
	}
	var oursJSON map[string]any
	data, _ := json.Marshal(ours.Bundle)
	if err := json.Unmarshal(data, &oursJSON); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "name", "package", "image"} {
		if rendered[k] != oursJSON[k] {
			t.Errorf("%s: opm render says %v, the catalog step %v", k, rendered[k], oursJSON[k])
		}
	}
	for _, k := range []string{"properties", "relatedImages"} {
		if got, want := strings.Join(canonical(t, oursJSON[k]), "\n"), strings.Join(canonical(t, rendered[k]), "\n"); got != want {
			t.Errorf("%s differ:\nours: %s\nopm:  %s", k, got, want)
		}
	}

	// A fresh catalog, with the catalog image on an opm base that holds the real opm binary.
	cat := filepath.Join(t.TempDir(), "catalog")
	base := opmBase(t, opm(t))
	res, err := Run(t.Context(), Options{
		BundleDir: dir1, BundleImage: ref1, PackageFile: packageFile(t),
		Dir: cat, Fresh: true, Base: "oci:" + base, ImageOutDir: t.TempDir(),
		Stamp: stamp.Stamp{Version: "v1.0.0", Commit: "0123456789abcdef0123456789abcdef01234567"}, MTime: testTime,
		Platforms: []platform.Platform{{OS: "linux", Arch: "amd64"}}, Registry: reg + "/test",
	})
	if err != nil {
		t.Fatal(err)
	}
	runOPM(t, "validate", cat)
	checkCatalogImage(t, res.Image.Reference)
	checkMigrated(t, cat)

	// Release engineers add the next bundle to the existing catalog directory.
	dir2, ref2 := pushBundle(t, reg, "v1.1.0", pins)
	if _, err := Run(t.Context(), Options{BundleDir: dir2, BundleImage: ref2, PackageFile: packageFile(t), Dir: cat}); err != nil {
		t.Fatal(err)
	}
	runOPM(t, "validate", cat)
	checkMigrated(t, cat)
	want := `[{"name":"aws-efs-csi-driver-operator.v1.0.0","skipRange":"\u003e=4.9.0-0 \u003c1.0.0"},` +
		`{"name":"aws-efs-csi-driver-operator.v1.1.0","replaces":"aws-efs-csi-driver-operator.v1.0.0","skipRange":"\u003e=4.9.0-0 \u003c1.1.0"}]`
	if entries := channelEntries(t, cat, "aws-efs-csi-driver-operator", "stable"); entries != want {
		t.Errorf("channel entries:\n got %s\nwant %s", entries, want)
	}
	// Adding the same bundle again changes nothing; an older one is refused.
	before := readTree(t, cat)
	if _, err := Run(t.Context(), Options{BundleDir: dir2, BundleImage: ref2, PackageFile: packageFile(t), Dir: cat}); err != nil {
		t.Fatal(err)
	}
	if after := readTree(t, cat); after != before {
		t.Errorf("adding v1.1.0 again changed the catalog")
	}
	dir0, ref0 := pushBundle(t, reg, "v0.9.0", pins)
	_, err = Run(t.Context(), Options{BundleDir: dir0, BundleImage: ref0, PackageFile: packageFile(t), Dir: cat})
	if err == nil || !strings.Contains(err.Error(), "not older than 0.9.0") {
		t.Fatalf("adding an older bundle: error %v, want one saying the head is not older", err)
	}
	if after := readTree(t, cat); after != before {
		t.Errorf("a refused bundle changed the catalog")
	}
	runOPM(t, "validate", cat)
}

func packageFile(t *testing.T) string {
	t.Helper()
	return filepath.Join(workspacetest.Root(t), "operator", "manifests", bundle.PackageFile)
}

// loadCatalog reads a catalog directory with operator-registry.
func loadCatalog(t *testing.T, dir string) *declcfg.DeclarativeConfig {
	t.Helper()
	cfg, err := declcfg.LoadFS(t.Context(), os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func channelEntries(t *testing.T, dir, pkg, channel string) string {
	t.Helper()
	for _, c := range loadCatalog(t, dir).Channels {
		if c.Package == pkg && c.Name == channel {
			out, _ := json.Marshal(c.Entries)
			return string(out)
		}
	}
	t.Fatalf("%s has no channel %s in package %s", dir, channel, pkg)
	return ""
}

// checkMigrated checks that every bundle of the catalog is at the default migrate level: olm.csv.metadata, no
// olm.bundle.object.
func checkMigrated(t *testing.T, dir string) {
	t.Helper()
	for _, b := range loadCatalog(t, dir).Bundles {
		var types []string
		for _, p := range b.Properties {
			types = append(types, p.Type)
		}
		all := strings.Join(types, ",")
		if strings.Contains(all, property.TypeBundleObject) || !strings.Contains(all, property.TypeCSVMetadata) {
			t.Errorf("bundle %s/%s has properties %s: want olm.csv.metadata and no olm.bundle.object", b.Package, b.Name, all)
		}
	}
}

// readTree returns every file under dir with its content, in order.
func readTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		fmt.Fprintf(&b, "== %s\n%s", p, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// opmBase writes a linux/amd64 OCI layout holding the opm binary at /bin/opm, standing in for the opm base image.
func opmBase(t *testing.T, opmBin string) string {
	t.Helper()
	data, err := os.ReadFile(opmBin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: testTime},
		{Name: "bin/opm", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data)), ModTime: testTime},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Entrypoint = []string{"/bin/opm"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "opm-base")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"})); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkCatalogImage pulls the pushed catalog image, checks its command and label, extracts /configs and runs
// opm validate on it.
func checkCatalogImage(t *testing.T, ref string) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(r)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	if got := strings.Join(append(cf.Config.Entrypoint, cf.Config.Cmd...), " "); got != "/bin/opm serve /configs --cache-dir=/tmp/cache" {
		t.Errorf("catalog image runs %q", got)
	}
	if cf.Config.Labels["operators.operatorframework.io.index.configs.v1"] != ConfigsDir {
		t.Errorf("labels %v lack the configs label", cf.Config.Labels)
	}
	dir := t.TempDir()
	tr := tar.NewReader(mutate.Extract(img))
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := strings.CutPrefix(h.Name, "configs/")
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("the catalog image has no files under /configs")
	}
	runOPM(t, "validate", dir)
}
