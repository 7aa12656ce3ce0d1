package gobuild

import (
	"bytes"
	"debug/buildinfo"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/fipscheck"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
)

func TestParseMode(t *testing.T) {
	for value, want := range map[string]Mode{"": Static, "false": Static, "0": Static, "true": FIPS, "1": FIPS, "TRUE": FIPS} {
		if got, err := ParseMode(value); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", value, got, err, want)
		}
	}
	if _, err := ParseMode("yes"); err == nil || !strings.Contains(err.Error(), `FIPS "yes": want true`) {
		t.Errorf("ParseMode(yes) error = %v, want one naming the variable, the value and the accepted ones", err)
	}
}

func TestMergeTags(t *testing.T) {
	for _, tc := range []struct{ goflags, want string }{
		{"", "strictfipsruntime"},
		{"-mod=vendor", "strictfipsruntime"},
		{"-mod=vendor -tags=foo,bar", "foo,bar,strictfipsruntime"},
		{"--tags=strictfipsruntime", "strictfipsruntime"},
	} {
		if got := mergeTags(tc.goflags, "strictfipsruntime"); got != tc.want {
			t.Errorf("mergeTags(%q) = %q, want %q", tc.goflags, got, tc.want)
		}
	}
}

func TestResolveMode(t *testing.T) {
	amd64 := []platform.Platform{{OS: "linux", Arch: "amd64"}}
	settings := func(kv ...string) goSettings {
		s := goSettings{values: map[string]string{"GOROOT": t.TempDir(), "GOHOSTOS": "linux", "GOHOSTARCH": "amd64", "GOFIPS140": "off", "CGO_ENABLED": "1"}}
		for i := 0; i < len(kv); i += 2 {
			s.values[kv[i]] = kv[i+1]
		}
		return s
	}
	// Red Hat's toolchain: its standard library carries the golang-fips OpenSSL backend.
	redHat := settings("GOEXPERIMENT", "boringcrypto")
	if err := os.MkdirAll(filepath.Join(redHat.values["GOROOT"], opensslBackend), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CC", "")

	for _, tc := range []struct {
		name     string
		mode     Mode
		settings goSettings
		wantEnv  []string
		wantTags string
	}{
		{"static", Static, settings(), []string{"CGO_ENABLED=0"}, ""},
		{"upstream Go: the certified native module", FIPS, settings(), []string{"CGO_ENABLED=1", "GOFIPS140=v1.0.0"}, "strictfipsruntime"},
		{"upstream Go, GOFIPS140 chosen by the environment", FIPS, settings("GOFIPS140", "inprocess"), []string{"CGO_ENABLED=1"}, "strictfipsruntime"},
		{"Red Hat Go: its GOEXPERIMENT plus strictfipsruntime", FIPS, redHat, []string{"CGO_ENABLED=1", "GOEXPERIMENT=strictfipsruntime,boringcrypto"}, "strictfipsruntime"},
		{"GOFLAGS tags kept", FIPS, settings("GOFLAGS", "-mod=vendor -tags=foo"), []string{"CGO_ENABLED=1", "GOFIPS140=v1.0.0"}, "foo,strictfipsruntime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := resolveMode(tc.mode, tc.settings, amd64)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.env, tc.wantEnv) || b.tags != tc.wantTags {
				t.Errorf("env %v, tags %q; want %v, %q", b.env, b.tags, tc.wantEnv, tc.wantTags)
			}
		})
	}

	if _, err := resolveMode(FIPS, settings("CGO_ENABLED", "0"), amd64); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED is 0") {
		t.Errorf("FIPS with CGO_ENABLED=0: error %v, want one naming CGO_ENABLED", err)
	}
	if _, err := resolveMode(FIPS, settings(), []platform.Platform{{OS: "linux", Arch: "arm64"}}); err == nil || !strings.Contains(err.Error(), "PLATFORMS linux/arm64 with FIPS=true") {
		t.Errorf("FIPS cross-compile without CC: error %v, want one naming PLATFORMS and CC", err)
	}
}

// TestBuildFIPSMode builds the same program in both modes with this machine's (upstream) Go and checks each against
// check-payload's rules: the FIPS binary passes, the static one fails.
func TestBuildFIPSMode(t *testing.T) {
	root, prog := newWorkspace(t)
	opts := options(root, prog, io.Discard)
	opts.Platforms = opts.Platforms[:1]
	opts.Mode = FIPS
	results, err := Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	fipsPath := results[0].Path
	r, err := fipscheck.Check(fipsPath)
	if err != nil {
		t.Fatal(err)
	}
	if r.Finding != nil || r.Kind != fipscheck.GoNativeFIPS || r.Static || !slices.Contains(r.Needed, "libc.so.6") {
		t.Fatalf("FIPS binary: kind %q, finding %v, static %v, needed %v; want Go's native FIPS module, no finding, dynamic against libc", r.Kind, r.Finding, r.Static, r.Needed)
	}
	bi, err := buildinfo.ReadFile(fipsPath)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "1" || !strings.Contains(","+settings["-tags"]+",", ",strictfipsruntime,") ||
		!strings.HasPrefix(settings["GOFIPS140"], "v1.0.0") || settings["-trimpath"] != "true" {
		t.Errorf("FIPS build settings %v: want CGO_ENABLED=1, the strictfipsruntime tag, GOFIPS140 v1.0.0, -trimpath", settings)
	}
	fipsBytes, _ := os.ReadFile(fipsPath)

	// Reproducible: a clean FIPS build gives the same bytes.
	if err := os.RemoveAll(opts.OutDir); err != nil {
		t.Fatal(err)
	}
	if results, err = Build(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(results[0].Path); !bytes.Equal(again, fipsBytes) {
		t.Error("two clean FIPS builds differ")
	}

	// The mode is an input: switching to static recompiles, and the static binary fails the rules.
	opts.Mode = Static
	if results, err = Build(t.Context(), opts); err != nil || !results[0].Compiled {
		t.Fatalf("static build after FIPS: compiled %v, err %v; want a recompile", results[0].Compiled, err)
	}
	r, err = fipscheck.Check(results[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Finding == nil || r.Finding.Rule != "ErrGoNotCgoEnabled" || !r.Static {
		t.Errorf("static binary: finding %v, static %v; want ErrGoNotCgoEnabled on a static binary", r.Finding, r.Static)
	}
}
