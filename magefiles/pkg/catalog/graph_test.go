package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"github.com/operator-framework/operator-registry/pkg/lib/config"
)

const ourPackage = "aws-efs-csi-driver-operator"

var testPackage = Package{Name: ourPackage, DefaultChannel: "stable"}

func testBundle(version string) Bundle {
	name := ourPackage + ".v" + version
	return Bundle{
		Bundle: declcfg.Bundle{
			Schema: declcfg.SchemaBundle, Name: name, Package: ourPackage, Image: "quay.io/o/b@sha256:" + strings.Repeat("a", 64),
			Properties: []property.Property{property.MustBuildPackage(ourPackage, version)},
		},
		Version: version, SkipRange: ">=0.0.0-0 <" + version, Channels: []string{"stable"},
	}
}

// addToDir does what Run does between rendering and building the image.
func addToDir(t *testing.T, dir string, b Bundle) error {
	t.Helper()
	cfg, files, err := load(t.Context(), dir)
	if err != nil {
		return err
	}
	current, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		return err
	}
	if err := AddBundle(cfg, current, testPackage, b); err != nil {
		return err
	}
	return write(t.Context(), *cfg, dir, files, false)
}

// TestAddBundleKeepsOtherPackages adds to an existing catalog directory that holds another package in a JSON file
// and a file that is not part of the catalog (hidden from opm by .indexignore, as opm requires).
func TestAddBundleKeepsOtherPackages(t *testing.T) {
	dir := t.TempDir()
	other := `{"schema": "olm.package", "name": "other", "defaultChannel": "alpha"}
{"schema": "olm.channel", "package": "other", "name": "alpha", "entries": [{"name": "other.v1"}]}
{"schema": "olm.bundle", "package": "other", "name": "other.v1", "image": "quay.io/o/other@sha256:` + strings.Repeat("b", 64) + `",
 "properties": [{"type": "olm.package", "value": {"packageName": "other", "version": "1.0.0"}}]}
`
	files := map[string]string{"index.json": other, "README.md": "not a catalog file\n", ".indexignore": "README.md\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantOther := packageJSON(t, loadCatalog(t, dir), "other")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if err := addToDir(t, dir, testBundle(v)); err != nil {
			t.Fatal(err)
		}
		if err := config.Validate(t.Context(), os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
	}
	if got := packageJSON(t, loadCatalog(t, dir), "other"); got != wantOther {
		t.Errorf("the other package changed:\n got %s\nwant %s", got, wantOther)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || string(data) != files["README.md"] {
		t.Errorf("README.md: %q, %v: want it untouched", data, err)
	}
	for _, p := range []string{"index.json", "other/catalog.yaml", ourPackage + "/catalog.yaml"} {
		_, err := os.Stat(filepath.Join(dir, p))
		if exists := err == nil; exists != (p != "index.json") {
			t.Errorf("%s exists: %v: want the catalog in opm's layout, <package>/catalog.yaml", p, exists)
		}
	}
	if pkgs := loadCatalog(t, dir).Packages; len(pkgs) != 2 {
		t.Errorf("packages %+v: want other and %s only (the bundle is in its own package only)", pkgs, ourPackage)
	}
	want := `[{"name":"aws-efs-csi-driver-operator.v1.0.0","skipRange":"\u003e=0.0.0-0 \u003c1.0.0"},` +
		`{"name":"aws-efs-csi-driver-operator.v1.1.0","replaces":"aws-efs-csi-driver-operator.v1.0.0","skipRange":"\u003e=0.0.0-0 \u003c1.1.0"}]`
	if got := channelEntries(t, dir, ourPackage, "stable"); got != want {
		t.Errorf("entries\n got %s\nwant %s", got, want)
	}
	// An older bundle is refused, naming the head, and the directory is left as it was.
	before := readTree(t, dir)
	err := addToDir(t, dir, testBundle("0.9.0"))
	if err == nil || !strings.Contains(err.Error(), "the head aws-efs-csi-driver-operator.v1.1.0 has version 1.1.0") {
		t.Fatalf("older bundle: error %v", err)
	}
	if readTree(t, dir) != before {
		t.Error("a refused bundle changed the catalog")
	}
}

func packageJSON(t *testing.T, cfg *declcfg.DeclarativeConfig, pkg string) string {
	t.Helper()
	var out []any
	for _, p := range cfg.Packages {
		if p.Name == pkg {
			out = append(out, p)
		}
	}
	for _, c := range cfg.Channels {
		if c.Package == pkg {
			out = append(out, c)
		}
	}
	for _, b := range cfg.Bundles {
		if b.Package == pkg {
			out = append(out, b)
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestACSVInTwoPackagesIsRefused adds a bundle to a catalog that an earlier version of this step wrote, with the
// CSV in our package and in the community aws-efs-operator's: opm validates it, but OLM v0.38.0 resolves no
// Subscription from it ("expected exactly one operator, got 2"), so the step refuses it and names the bundle.
func TestACSVInTwoPackagesIsRefused(t *testing.T) {
	dir := t.TempDir()
	v1 := testBundle("1.0.0")
	community := v1.Bundle
	community.Package = "aws-efs-operator"
	community.Properties = []property.Property{property.MustBuildPackage("aws-efs-operator", "1.0.0")}
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{
			{Schema: declcfg.SchemaPackage, Name: ourPackage, DefaultChannel: "stable"},
			{Schema: declcfg.SchemaPackage, Name: "aws-efs-operator", DefaultChannel: "stable"},
		},
		Channels: []declcfg.Channel{
			{Schema: declcfg.SchemaChannel, Package: ourPackage, Name: "stable", Entries: []declcfg.ChannelEntry{{Name: v1.Name}}},
			{Schema: declcfg.SchemaChannel, Package: "aws-efs-operator", Name: "stable", Entries: []declcfg.ChannelEntry{{Name: v1.Name}}},
		},
		Bundles: []declcfg.Bundle{v1.Bundle, community},
	}
	if err := declcfg.WriteFS(cfg, dir, declcfg.WriteYAML, ".yaml"); err != nil {
		t.Fatal(err)
	}
	if err := config.Validate(t.Context(), os.DirFS(dir)); err != nil {
		t.Fatalf("opm's validation: %v; want it to accept the catalog (the defect is one it does not see)", err)
	}
	before := readTree(t, dir)
	err := addToDir(t, dir, testBundle("1.1.0"))
	want := "bundle aws-efs-csi-driver-operator.v1.0.0 is in packages aws-efs-csi-driver-operator and aws-efs-operator"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "expected exactly one operator, got 2") {
		t.Fatalf("error %v, want one saying %q and quoting OLM", err, want)
	}
	if readTree(t, dir) != before {
		t.Error("a refused catalog was changed")
	}
}

func TestAnInvalidCatalogIsRefusedWithOPMsMessage(t *testing.T) {
	dir := t.TempDir()
	broken := "---\nschema: olm.package\nname: aws-efs-csi-driver-operator\ndefaultChannel: stable\n" +
		"---\nschema: olm.channel\npackage: aws-efs-csi-driver-operator\nname: stable\nentries:\n- name: aws-efs-csi-driver-operator.v0.1.0\n"
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	err := addToDir(t, dir, testBundle("1.0.0"))
	if err == nil || !strings.Contains(err.Error(), "no olm.bundle blobs found in package \"aws-efs-csi-driver-operator\" for olm.channel entries [aws-efs-csi-driver-operator.v0.1.0]") {
		t.Fatalf("error %v, want operator-registry's message about the missing bundle", err)
	}
}

func TestReadPackage(t *testing.T) {
	for _, tc := range []struct {
		name, content, wantErr string
	}{
		{"shipped", "", ""},
		{"no channel", "name: p\n", "name and defaultChannel are required"},
		{"unknown field", "name: p\ndefaultChannel: stable\nchannels: [stable]\n", `unknown field "channels"`},
		// The bundle in a second package made the catalog unresolvable in OLM (Resolvable); the field is gone.
		{"upgradeFrom", "name: p\ndefaultChannel: stable\nupgradeFrom:\n- {name: q, defaultChannel: stable}\n", `unknown field "upgradeFrom"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := packageFile(t)
			if tc.content != "" {
				path = filepath.Join(t.TempDir(), "package.yaml")
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ReadPackage(path)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestRunRejectsAnUnknownMigrateLevel(t *testing.T) {
	_, err := Run(t.Context(), Options{PackageFile: packageFile(t), MigrateLevel: "bundle-object-to-everything", Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `CATALOG_MIGRATE_LEVEL "bundle-object-to-everything": unknown migration level`) {
		t.Fatalf("error %v, want one naming CATALOG_MIGRATE_LEVEL", err)
	}
}
