package gobuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/fipscheck"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
)

// Mode says how the binaries are compiled and linked.
type Mode int

const (
	// Static is for local development: CGO_ENABLED=0, so binaries are static and cross-compile anywhere.
	Static Mode = iota
	// FIPS is what the images ship (their Containerfiles' builder stages use it): binaries that pass
	// openshift/check-payload's rules (package fipscheck), which apply because the CSV claims fips-compliant. It
	// compiles with cgo and the strictfipsruntime tag, links dynamically, and keeps the toolchain's own settings
	// (GOFLAGS, GOEXPERIMENT, GOFIPS140 and CGO_ENABLED from the environment are never overridden). The crypto
	// backend is the toolchain's: Red Hat's golang-fips toolchain (the OpenShift builder image) uses OpenSSL, and
	// strictfipsruntime is added to its GOEXPERIMENT as ART's builder shim does; upstream Go uses Go's own FIPS
	// 140 module, GOFIPS140=v1.0.0 (the certified one) unless GOFIPS140 names another (off, the default, counts as
	// unset). Every binary is checked against check-payload's rules before it replaces the previous one.
	FIPS
)

func (m Mode) String() string {
	if m == FIPS {
		return "FIPS"
	}
	return "static"
}

// ParseMode reads the FIPS environment variable: empty, false or 0 is Static; true or 1 is FIPS.
func ParseMode(value string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "", "false", "0":
		return Static, nil
	case "true", "1":
		return FIPS, nil
	}
	return Static, fmt.Errorf("FIPS %q: want true (the binaries the images ship: cgo, dynamic, check-payload's rules) or false (static, the default)", value)
}

// fipsTag is the build tag check-payload looks for, and the one Red Hat's toolchain reads.
const fipsTag = "strictfipsruntime"

// opensslBackend is the golang-fips OpenSSL backend's package in the standard library of Red Hat's Go toolchain;
// check-payload requires its dlopen function of binaries not built with Go's native FIPS module.
const opensslBackend = "src/vendor/github.com/golang-fips/openssl/v2"

// goSettings is what Build reads of the toolchain: the fingerprint of every build and what the FIPS mode
// decides from.
type goSettings struct {
	values map[string]string
	// fingerprint is every value, in a fixed order.
	fingerprint string
}

var settingNames = []string{"GOVERSION", "GOROOT", "GOHOSTOS", "GOHOSTARCH", "GOFLAGS", "GOEXPERIMENT", "GOFIPS140", "CGO_ENABLED", "CC", "CGO_CFLAGS", "CGO_LDFLAGS"}

func readGoSettings(ctx context.Context, dir, goBin string) (goSettings, error) {
	out, err := toolchain.Output(ctx, dir, nil, goBin, append([]string{"env"}, settingNames...)...)
	if err != nil {
		return goSettings{}, fmt.Errorf("reading the Go toolchain settings: %w", err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != len(settingNames) {
		return goSettings{}, fmt.Errorf("go env %s printed %d lines, want %d", strings.Join(settingNames, " "), len(lines), len(settingNames))
	}
	s := goSettings{values: map[string]string{}, fingerprint: out}
	for i, name := range settingNames {
		s.values[name] = lines[i]
	}
	return s, nil
}

// buildMode is a Mode resolved against the toolchain: the environment and the tags every compile gets.
type buildMode struct {
	mode Mode
	env  []string
	tags string
	// summary names the choices in progress lines, e.g. "FIPS: Go FIPS 140 module v1.0.0".
	summary string
}

func resolveMode(mode Mode, s goSettings, platforms []platform.Platform) (buildMode, error) {
	if mode != FIPS {
		return buildMode{mode: Static, env: []string{"CGO_ENABLED=0"}, summary: "static"}, nil
	}
	if s.values["CGO_ENABLED"] == "0" {
		return buildMode{}, fmt.Errorf("FIPS=true compiles with cgo, but CGO_ENABLED is 0 (environment or go env -w): unset it or set CGO_ENABLED=1 (with a C compiler on PATH)")
	}
	host := platform.Platform{OS: s.values["GOHOSTOS"], Arch: s.values["GOHOSTARCH"]}
	for _, p := range platforms {
		if p != host && os.Getenv("CC") == "" {
			return buildMode{}, fmt.Errorf("PLATFORMS %s with FIPS=true: cgo needs a C compiler for %s, and CC is not set; build FIPS binaries for the host platform %s (as each image's builder stage does on its own platform) or set CC to a cross-compiler", p, p, host)
		}
	}
	b := buildMode{mode: FIPS, env: []string{"CGO_ENABLED=1"}, tags: mergeTags(s.values["GOFLAGS"], fipsTag)}
	if _, err := os.Stat(filepath.Join(s.values["GOROOT"], opensslBackend)); err == nil {
		exp := s.values["GOEXPERIMENT"]
		if !strings.Contains(","+exp+",", ","+fipsTag+",") {
			exp = strings.Trim(fipsTag+","+exp, ",")
		}
		b.env = append(b.env, "GOEXPERIMENT="+exp)
		b.summary = "FIPS: OpenSSL (golang-fips), GOEXPERIMENT=" + exp
		return b, nil
	}
	module := s.values["GOFIPS140"]
	if module == "" || module == "off" {
		module = fipscheck.MinGOFIPS140
		b.env = append(b.env, "GOFIPS140="+module)
	}
	b.summary = "FIPS: Go FIPS 140 module " + module
	return b, nil
}

// mergeTags returns the -tags value of GOFLAGS with tag added: a -tags flag on the command line replaces the one
// in GOFLAGS, so the environment's tags are carried over.
func mergeTags(goflags, tag string) string {
	var tags []string
	for _, f := range strings.Fields(goflags) {
		for _, prefix := range []string{"-tags=", "--tags="} {
			if v, ok := strings.CutPrefix(f, prefix); ok {
				tags = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
			}
		}
	}
	for _, t := range tags {
		if t == tag {
			return strings.Join(tags, ",")
		}
	}
	return strings.Join(append(tags, tag), ",")
}

// verifyFIPS applies check-payload's rules to a FIPS-mode binary, and one of ours: it is dynamically linked, so it
// would pass under either toolchain's rules.
func verifyFIPS(path string, a Artefact) error {
	r, err := fipscheck.Check(path)
	if err != nil {
		return fmt.Errorf("checking %s against check-payload's rules: %w", a, err)
	}
	if r.Finding != nil {
		return fmt.Errorf("%s built with FIPS=true fails check-payload's rules (%s): %s; settings %v", a, r.Kind, r.Finding, r.Settings)
	}
	if r.Static {
		return fmt.Errorf("%s built with FIPS=true is statically linked: want a dynamic executable (cgo, no -static)", a)
	}
	return nil
}
