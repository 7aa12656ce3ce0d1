package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
)

// TestTemplateRendersFromThePushedBundle pushes the bundle image to a loopback registry under the Konflux
// repository name the mirror set knows, renders a basic template naming it by digest (as the nudged template
// does) from the registry, not from the local tree, and checks the result with `opm validate` and the released
// names of the mirror set.
func TestTemplateRendersFromThePushedBundle(t *testing.T) {
	reg := startRegistry(t)
	_, ref := pushBundle(t, reg, "v5.0.1", pinImages(t, reg))
	d, err := name.NewDigest(ref)
	if err != nil {
		t.Fatal(err)
	}
	released := "registry.redhat.io/openshift4/ose-aws-efs-csi-driver-operator-bundle"
	mirrors := bundle.MirrorSet{Mirrors: map[string][]string{released: {d.Context().Name()}}}
	tmpl := filepath.Join(t.TempDir(), TemplateFile)
	content := "schema: olm.template.basic\nentries:\n" +
		"- schema: olm.package\n  name: aws-efs-csi-driver-operator\n  defaultChannel: stable\n" +
		"- schema: olm.channel\n  package: aws-efs-csi-driver-operator\n  name: stable\n  entries:\n" +
		"  - name: aws-efs-csi-driver-operator.v5.0.1\n    skipRange: '>=4.9.0-0 <5.0.1'\n" +
		"- schema: olm.bundle\n  image: " + ref + "\n"
	if err := os.WriteFile(tmpl, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ocp := range []string{"4.16", "5.0"} {
		level, err := MigrateLevelFor(ocp)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := RenderTemplate(t.Context(), tmpl, &Registry{Insecure: true}, level, mirrors)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Bundles) != 1 || cfg.Bundles[0].Image != released+"@"+d.DigestStr() {
			t.Fatalf("OpenShift %s: bundles %+v: want one, %s@%s", ocp, cfg.Bundles, released, d.DigestStr())
		}
		dir := t.TempDir()
		if err := declcfg.WriteFS(*cfg, dir, declcfg.WriteYAML, ".yaml"); err != nil {
			t.Fatal(err)
		}
		runOPM(t, "validate", dir)
		checkMetadataFormat(t, ocp, cfg)
	}
}

// checkMetadataFormat: Konflux's validate-fbc wants olm.csv.metadata from OpenShift 4.17 and olm.bundle.object before.
func checkMetadataFormat(t *testing.T, ocp string, cfg *declcfg.DeclarativeConfig) {
	t.Helper()
	want, refuse := "olm.csv.metadata", "olm.bundle.object"
	if level, err := MigrateLevelFor(ocp); err != nil {
		t.Fatal(err)
	} else if level == "none" {
		want, refuse = refuse, want
	}
	for _, b := range cfg.Bundles {
		var types []string
		for _, p := range b.Properties {
			types = append(types, p.Type)
		}
		all := strings.Join(types, ",")
		if !strings.Contains(all, want) || strings.Contains(all, refuse) {
			t.Errorf("OpenShift %s: bundle %s has %s: want %s and no %s", ocp, b.Name, all, want, refuse)
		}
	}
}

func TestCheckNoPruning(t *testing.T) {
	ch := func(pkg, name string, entries ...string) declcfg.Channel {
		c := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: name}
		for _, e := range entries {
			c.Entries = append(c.Entries, declcfg.ChannelEntry{Name: e})
		}
		return c
	}
	released := declcfg.DeclarativeConfig{Channels: []declcfg.Channel{
		ch(ourPackage, "stable", "a.v4.18.0-1", "a.v5.0.0-1"),
		ch(ourPackage, "candidate-5.0", "a.v5.0.0-0"),
		ch("other", "stable", "o.v1"),
	}}
	for _, tc := range []struct {
		name    string
		catalog []declcfg.Channel
		wantErr string
	}{
		{"keeps all and adds", []declcfg.Channel{ch(ourPackage, "stable", "a.v4.18.0-1", "a.v5.0.0-1", "a.v5.0.1")}, ""},
		{"drops an entry", []declcfg.Channel{ch(ourPackage, "stable", "a.v5.0.0-1", "a.v5.0.1")},
			"the catalog prunes the released a.v4.18.0-1 from channel aws-efs-csi-driver-operator.stable"},
		{"drops the channel", []declcfg.Channel{ch(ourPackage, "fast", "a.v5.0.1")},
			"the catalog prunes the released channel aws-efs-csi-driver-operator.stable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckNoPruning(declcfg.DeclarativeConfig{Channels: tc.catalog}, released)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestMigrateLevelFor(t *testing.T) {
	for ocp, want := range map[string]string{"4.14": "none", "4.16": "none", "4.17": DefaultMigrateLevel, "4.22": DefaultMigrateLevel, "5.0": DefaultMigrateLevel} {
		if got, err := MigrateLevelFor(ocp); err != nil || got != want {
			t.Errorf("MigrateLevelFor(%s) = %q, %v; want %q", ocp, got, err, want)
		}
	}
	if _, err := MigrateLevelFor("v4.18"); err == nil {
		t.Error("v4.18 accepted")
	}
}
