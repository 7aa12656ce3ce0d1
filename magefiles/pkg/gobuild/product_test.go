package gobuild_test

import (
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/fipscheck"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/gobuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// TestProductFIPSBuildPassesCheckPayloadRules builds the driver and the operator the way their images' builder
// stages do (FIPS=true), with this machine's upstream Go, and checks them against openshift/check-payload's rules;
// then builds the driver in the default static mode and checks that it fails them, as it would if an image shipped
// it. One platform (linux/amd64) and Go's build cache keep it to a few minutes cold and seconds warm.
func TestProductFIPSBuildPassesCheckPayloadRules(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	stamps := map[string]stamp.Stamp{}
	for _, p := range gobuild.Programs() {
		stamps[p.Module] = stamp.Stamp{Version: "v0.0.0-fipstest", Commit: "0000000000000000000000000000000000000000"}
	}
	opts := gobuild.Options{
		Root:      root,
		OutDir:    filepath.Join(t.TempDir(), "bin"),
		Programs:  gobuild.Programs(),
		Platforms: []platform.Platform{{OS: "linux", Arch: "amd64"}},
		Stamps:    stamps,
		Jobs:      2,
		Progress:  io.Discard,
		Mode:      gobuild.FIPS,
	}
	results, err := gobuild.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		v, err := fipscheck.Check(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		if v.Finding != nil || v.Kind != fipscheck.GoNativeFIPS {
			t.Errorf("%s (FIPS=true): %s, finding %v; want Go's native FIPS module and no finding (settings %v)", r.Artefact, v.Kind, v.Finding, v.Settings)
		}
		if v.Static || !slices.Contains(v.Needed, "libc.so.6") {
			t.Errorf("%s (FIPS=true): static %v, DT_NEEDED %v; want a dynamic executable needing libc.so.6", r.Artefact, v.Static, v.Needed)
		}
		if v.Settings["CGO_ENABLED"] != "1" || v.Settings["-trimpath"] != "true" {
			t.Errorf("%s (FIPS=true): settings %v; want CGO_ENABLED=1 and -trimpath", r.Artefact, v.Settings)
		}
	}

	driver, _ := gobuild.SelectPrograms("aws-efs-csi-driver")
	opts.Programs, opts.Mode = driver, gobuild.Static
	results, err = gobuild.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := fipscheck.Check(results[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if v.Finding == nil || v.Finding.Rule != "ErrGoNotCgoEnabled" {
		t.Errorf("%s (static): finding %v; want ErrGoNotCgoEnabled, the rule a static build breaks", results[0].Artefact, v.Finding)
	}
}
