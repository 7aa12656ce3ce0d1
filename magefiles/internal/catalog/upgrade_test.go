package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/openshift/aws-efs-csi/magefiles/internal/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/internal/platform"
	"github.com/openshift/aws-efs-csi/magefiles/internal/stamp"
)

// shipped are the CSVs already installed on clusters that OLM must upgrade to this operator: OpenShift's package
// (every minor from 4.9 to 5.0, as ART names them) and the community aws-efs-operator (its OperatorHub releases
// and the app-sre builds, <0.1>.<commits>-<hash>).
var shipped = []struct {
	pkg, name, version string
}{
	{ourPackage, ourPackage + ".v4.9.0", "4.9.0"},
	{ourPackage, ourPackage + ".v4.16.0", "4.16.0"},
	{ourPackage, ourPackage + ".v4.22.0", "4.22.0"},
	{ourPackage, ourPackage + ".v5.0.0", "5.0.0"},
	{"aws-efs-operator", "aws-efs-operator.v0.0.8", "0.0.8"},
	{"aws-efs-operator", "aws-efs-operator.v0.1.189-3f73a592", "0.1.189-3f73a592"},
}

// previousCatalog writes the catalog a cluster upgrades from: OpenShift's package with its 5.0.0 channel head,
// whose entry skips 4.9-4.x by range as ART writes it, and the community package with its last release.
func previousCatalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	digest := "@sha256:" + strings.Repeat("c", 64)
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{
			{Schema: declcfg.SchemaPackage, Name: ourPackage, DefaultChannel: "stable"},
			{Schema: declcfg.SchemaPackage, Name: "aws-efs-operator", DefaultChannel: "stable"},
		},
		Channels: []declcfg.Channel{
			{Schema: declcfg.SchemaChannel, Package: ourPackage, Name: "stable", Entries: []declcfg.ChannelEntry{
				{Name: ourPackage + ".v5.0.0", SkipRange: ">=4.9.0-0 <5.0.0"},
			}},
			{Schema: declcfg.SchemaChannel, Package: "aws-efs-operator", Name: "stable", Entries: []declcfg.ChannelEntry{
				{Name: "aws-efs-operator.v0.0.8"},
			}},
		},
	}
	for _, s := range shipped {
		if s.name != ourPackage+".v5.0.0" && s.name != "aws-efs-operator.v0.0.8" {
			continue
		}
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{
			Schema: declcfg.SchemaBundle, Package: s.pkg, Name: s.name, Image: "registry.example.com/" + s.pkg + "-bundle" + digest,
			Properties: []property.Property{property.MustBuildPackage(s.pkg, s.version)},
		})
	}
	if err := declcfg.WriteFS(cfg, dir, declcfg.WriteYAML, ".yaml"); err != nil {
		t.Fatal(err)
	}
	runOPM(t, "validate", dir)
	return dir
}

// TestUpgradeGraph adds this repository's bundle, at the version of operator/VERSION, to a catalog holding the
// bundles it must upgrade, and checks the graph with opm: in both packages the channel head is ours, it replaces
// the previous head and its skipRange covers every shipped version, so OLM offers it to every existing install.
func TestUpgradeGraph(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "operator", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(data))
	ours := ourPackage + ".v" + version

	images, err := bundle.ReadImages(filepath.Join(repoRoot(t), "operator", "manifests", bundle.ImagesFile))
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for _, im := range images {
		pins[im.Placeholder] = "registry.example.com/" + im.RelatedImage + "@sha256:" + strings.Repeat("d", 64)
	}
	bundleDir := filepath.Join(t.TempDir(), "bundle")
	if _, err := bundle.Run(t.Context(), bundle.Options{
		Sources: bundle.SourcesIn(repoRoot(t)), OutDir: bundleDir, ImageOutDir: t.TempDir(),
		Stamp: stamp.Stamp{Version: "v" + version, Commit: strings.Repeat("0", 40)}, MTime: testTime,
		Pins: pins, RequireDigests: true, Platforms: []platform.Platform{{OS: "linux", Arch: "amd64"}}, K8sVersion: "1.36",
	}); err != nil {
		t.Fatal(err)
	}

	dir := previousCatalog(t)
	if _, err := Run(t.Context(), Options{
		BundleDir: bundleDir, BundleImage: "registry.example.com/bundle@sha256:" + strings.Repeat("e", 64),
		PackageFile: packageFile(t), Dir: dir,
	}); err != nil {
		t.Fatal(err)
	}
	runOPM(t, "validate", dir)

	// opm's own view of the graph: `opm render` of the catalog directory, channel by channel.
	var rendered []struct {
		Schema  string                 `json:"schema"`
		Package string                 `json:"package"`
		Name    string                 `json:"name"`
		Entries []declcfg.ChannelEntry `json:"entries"`
	}
	dec := json.NewDecoder(strings.NewReader(string(runOPM(t, "render", dir, "-o", "json"))))
	for dec.More() {
		var m struct {
			Schema  string                 `json:"schema"`
			Package string                 `json:"package"`
			Name    string                 `json:"name"`
			Entries []declcfg.ChannelEntry `json:"entries"`
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m.Schema == declcfg.SchemaChannel {
			rendered = append(rendered, m)
		}
	}
	previousHead := map[string]string{ourPackage: ourPackage + ".v5.0.0", "aws-efs-operator": "aws-efs-operator.v0.0.8"}
	for _, pkg := range []string{ourPackage, "aws-efs-operator"} {
		var entries []declcfg.ChannelEntry
		for _, c := range rendered {
			if c.Package == pkg && c.Name == "stable" {
				entries = c.Entries
			}
		}
		head := channelHeadOf(t, entries)
		if head.Name != ours {
			t.Errorf("package %s channel stable: head %s, want %s", pkg, head.Name, ours)
			continue
		}
		if head.Replaces != previousHead[pkg] {
			t.Errorf("package %s: %s replaces %q, want the previous head %s", pkg, ours, head.Replaces, previousHead[pkg])
		}
		skip, err := semver.ParseRange(head.SkipRange)
		if err != nil {
			t.Fatalf("package %s: skipRange %q: %v", pkg, head.SkipRange, err)
		}
		for _, s := range shipped {
			if s.pkg == pkg && !skip(semver.MustParse(s.version)) {
				t.Errorf("package %s: skipRange %q of %s does not cover the shipped %s: OLM would not offer the upgrade", pkg, head.SkipRange, ours, s.name)
			}
		}
	}
	// The community package carries the same bundle, under the community package's name.
	for _, b := range loadCatalog(t, dir).Bundles {
		if b.Name == ours && b.Package == "aws-efs-operator" && !strings.Contains(string(propertyValue(b, property.TypePackage)), `"packageName":"aws-efs-operator"`) {
			t.Errorf("the community package's %s has olm.package %s", ours, propertyValue(b, property.TypePackage))
		}
	}
}

// channelHeadOf is the entry no other entry replaces or skips; the test fails unless there is exactly one.
func channelHeadOf(t *testing.T, entries []declcfg.ChannelEntry) declcfg.ChannelEntry {
	t.Helper()
	incoming := map[string]bool{}
	for _, e := range entries {
		incoming[e.Replaces] = true
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var heads []declcfg.ChannelEntry
	for _, e := range entries {
		if !incoming[e.Name] {
			heads = append(heads, e)
		}
	}
	if len(heads) != 1 {
		t.Fatalf("entries %+v: %d heads, want 1", entries, len(heads))
	}
	return heads[0]
}

func propertyValue(b declcfg.Bundle, typ string) json.RawMessage {
	for _, p := range b.Properties {
		if p.Type == typ {
			return p.Value
		}
	}
	return nil
}

// TestVersionIsAboveEveryShippedVersion keeps operator/VERSION above the CSVs OLM must upgrade from: OLM never
// upgrades to a lower version.
func TestVersionIsAboveEveryShippedVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "operator", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := semver.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("operator/VERSION %q: want a semantic version: %v", data, err)
	}
	for _, s := range shipped {
		if !v.GT(semver.MustParse(s.version)) {
			t.Errorf("operator/VERSION %s is not above the shipped %s", v, s.name)
		}
	}
}
