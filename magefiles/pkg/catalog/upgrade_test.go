package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

// shipped are the CSVs already installed on clusters. OpenShift's package: the CSV names, versions and skipRanges
// of openshift/csi-operator config/aws-efs (release-4.18 @894ba4a: v4.18.0, ">=4.9.0-0 <4.18.0"; release-5.0
// @80937768: v5.0.0, ">=4.9.0-0 <5.0.0"), as ART ships them: its art.yaml rewrites the version and the skipRange's
// upper bound to <version>-<build> (the build numbers here are stand-ins of ART's form, YYYYMMDDHHMM; the real ones
// are in redhat-operator-index); and 4.9.0, the oldest any skipRange names. The community aws-efs-operator (its
// OperatorHub releases and the app-sre builds, <0.1>.<commits>-<hash>), whose installs switch by uninstall and
// install (docs/user-guide/upgrade-from-community-operator.md). Our version must stay above all of them.
var shipped = []struct {
	pkg, name, version, skipRange string
}{
	{ourPackage, ourPackage + ".v4.9.0", "4.9.0", ""},
	{ourPackage, ourPackage + ".v4.18.0-202507081833", "4.18.0-202507081833", ">=4.9.0-0 <4.18.0-202507081833"},
	{ourPackage, ourPackage + ".v5.0.0-202608111205", "5.0.0-202608111205", ">=4.9.0-0 <5.0.0-202608111205"},
	{communityPackage, communityPackage + ".v0.0.8", "0.0.8", ""},
	{communityPackage, communityPackage + ".v0.1.189-3f73a592", "0.1.189-3f73a592", ""},
}

const communityPackage = "aws-efs-operator"

// previousCatalog writes the catalog a cluster upgrades from: OpenShift's package with its 4.18 and 5.0 builds in
// channel stable as the redhat-operator-index holds them (each skipping the earlier by range; 5.0 is the head), and,
// as in an index that holds both, the community package with its last release.
func previousCatalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	digest := "@sha256:" + strings.Repeat("c", 64)
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{
			{Schema: declcfg.SchemaPackage, Name: ourPackage, DefaultChannel: "stable"},
			{Schema: declcfg.SchemaPackage, Name: communityPackage, DefaultChannel: "stable"},
		},
		Channels: []declcfg.Channel{
			{Schema: declcfg.SchemaChannel, Package: communityPackage, Name: "stable", Entries: []declcfg.ChannelEntry{
				{Name: communityPackage + ".v0.0.8"},
			}},
		},
	}
	var ours []declcfg.ChannelEntry
	for _, s := range shipped {
		if s.skipRange == "" && s.name != communityPackage+".v0.0.8" {
			continue
		}
		if s.pkg == ourPackage {
			// opm wants one head per channel and does not count skipRange edges, so each build also replaces the
			// one before it (stand-in: the index's own edges are read from it with entitlements, docs/release.md).
			e := declcfg.ChannelEntry{Name: s.name, SkipRange: s.skipRange}
			if len(ours) > 0 {
				e.Replaces = ours[len(ours)-1].Name
			}
			ours = append(ours, e)
		}
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{
			Schema: declcfg.SchemaBundle, Package: s.pkg, Name: s.name, Image: "registry.example.com/" + s.pkg + "-bundle" + digest,
			Properties: []property.Property{property.MustBuildPackage(s.pkg, s.version)},
		})
	}
	cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: ourPackage, Name: "stable", Entries: ours})
	if err := declcfg.WriteFS(cfg, dir, declcfg.WriteYAML, ".yaml"); err != nil {
		t.Fatal(err)
	}
	runOPM(t, "validate", dir)
	return dir
}

// TestUpgradeGraph adds this repository's bundle, at the version of operator/VERSION, to a catalog holding the
// bundles it must upgrade, and checks the graph with opm: in our package the channel head is ours, it replaces
// the previous head and its skipRange covers every shipped version of the package, so OLM offers it to every
// existing install; the community package is left as it was, and OLM can resolve from the catalog (Resolvable:
// the bundle was once added to the community package too, which made the whole catalog unresolvable).
func TestUpgradeGraph(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(workspacetest.Root(t), "operator", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(data))
	ours := ourPackage + ".v" + version

	images, err := bundle.ReadImages(filepath.Join(workspacetest.Root(t), "operator", "manifests", bundle.ImagesFile))
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for _, im := range images {
		pins[im.Placeholder] = "registry.example.com/" + im.RelatedImage + "@sha256:" + strings.Repeat("d", 64)
	}
	bundleDir := filepath.Join(t.TempDir(), "bundle")
	if _, err := bundle.Run(t.Context(), bundle.Options{
		Sources: bundle.SourcesIn(workspacetest.Root(t)), OutDir: bundleDir, ImageOutDir: t.TempDir(),
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
	var entries []declcfg.ChannelEntry
	for _, c := range rendered {
		if c.Package == ourPackage && c.Name == "stable" {
			entries = c.Entries
		}
	}
	head := channelHeadOf(t, entries)
	if head.Name != ours {
		t.Fatalf("package %s channel stable: head %s, want %s", ourPackage, head.Name, ours)
	}
	if want := ourPackage + ".v5.0.0-202608111205"; head.Replaces != want {
		t.Errorf("%s replaces %q, want the previous head %s", ours, head.Replaces, want)
	}
	skip, err := semver.ParseRange(head.SkipRange)
	if err != nil {
		t.Fatalf("skipRange %q: %v", head.SkipRange, err)
	}
	for _, s := range shipped {
		if s.pkg == ourPackage && !skip(semver.MustParse(s.version)) {
			t.Errorf("skipRange %q of %s does not cover the shipped %s: OLM would not offer the upgrade", head.SkipRange, ours, s.name)
		}
	}
	// Every older entry of the channel is upgradable to ours in one step (in its skipRange or replaced by it), in
	// operator-registry's model of the catalog opm wrote, whose head is ours.
	m, err := declcfg.ConvertToModel(*loadCatalog(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	ch := m[ourPackage].Channels["stable"]
	mhead, err := ch.Head()
	if err != nil || mhead.Name != ours {
		t.Fatalf("operator-registry's head of stable: %v, %v; want %s", mhead, err, ours)
	}
	for _, b := range ch.Bundles {
		if b.Name != ours && !skip(b.Version) && mhead.Replaces != b.Name {
			t.Errorf("%s (%s) cannot upgrade to %s: not in its skipRange %q, not replaced by it", b.Name, b.Version, ours, head.SkipRange)
		}
	}
	for _, c := range rendered {
		if c.Package == communityPackage && (len(c.Entries) != 1 || c.Entries[0].Name != communityPackage+".v0.0.8") {
			t.Errorf("the community package's channel %s changed: %+v", c.Name, c.Entries)
		}
	}
	cfg := loadCatalog(t, dir)
	for _, b := range cfg.Bundles {
		if b.Name == ours && b.Package != ourPackage {
			t.Errorf("%s is also in package %s", ours, b.Package)
		}
	}
	if err := Resolvable(*cfg); err != nil {
		t.Error(err)
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

// TestVersionIsAboveEveryShippedVersion keeps operator/VERSION above the CSVs OLM must upgrade from: OLM never
// upgrades to a lower version.
func TestVersionIsAboveEveryShippedVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(workspacetest.Root(t), "operator", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := semver.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("operator/VERSION %q: want a semantic version: %v", data, err)
	}
	// The scheme (docs/release.md#versions): the OpenShift stream of images/versions.conf, patch 1 or more. OpenShift's
	// own builds of the stream are <stream>.0-<build>, semver prereleases of <stream>.0, so only a patch above 0
	// keeps every build of ours (<version>-<build>, the lowest being <version>-0) above every build of theirs.
	vs, err := versions.Load(workspacetest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	if stream := fmt.Sprintf("%d.%d", v.Major, v.Minor); stream != vs.Get("OPENSHIFT_VERSION") || v.Patch < 1 {
		t.Errorf("operator/VERSION %s: want %s.N with N >= 1 (OPENSHIFT_VERSION of %s)", v, vs.Get("OPENSHIFT_VERSION"), versions.File)
	}
	lowest := v
	lowest.Pre = []semver.PRVersion{{VersionNum: 0, IsNum: true}}
	theirs := semver.MustParse(vs.Get("OPENSHIFT_VERSION") + ".0-999999999999")
	for _, s := range shipped {
		for _, ours := range []semver.Version{v, lowest} {
			if !ours.GT(semver.MustParse(s.version)) {
				t.Errorf("version %s is not above the shipped %s", ours, s.name)
			}
		}
	}
	if !lowest.GT(theirs) {
		t.Errorf("version %s is not above OpenShift's latest possible build of the stream, %s", lowest, theirs)
	}
}
