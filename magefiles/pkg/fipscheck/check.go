package fipscheck

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Kind says which of check-payload's rule sets applied to a file.
type Kind string

const (
	// NotExecutable: not an ELF executable (a script, a shared library, data); check-payload skips it.
	NotExecutable Kind = "not an ELF executable"
	// NotGo: an ELF executable without Go build information.
	NotGo Kind = "non-Go executable"
	// GoNoCrypto: a Go binary with no crypto function.
	GoNoCrypto Kind = "Go binary without crypto"
	// GoNativeFIPS: a Go binary using Go's native FIPS 140 module.
	GoNativeFIPS Kind = "Go binary with Go's native FIPS 140 module"
	// GoOpenSSL: a Go binary held to the OpenSSL (golang-fips) rules.
	GoOpenSSL Kind = "Go binary held to the OpenSSL rules"
)

// Finding is the rule a file fails. Rule is check-payload's name for it (its error variable).
type Finding struct {
	Rule    string
	Warning bool
	Detail  string
}

func (f Finding) String() string {
	level := "error"
	if f.Warning {
		level = "warning"
	}
	return fmt.Sprintf("%s (%s): %s", f.Rule, level, f.Detail)
}

// Result is check-payload's verdict on one file, with what it was based on.
type Result struct {
	Path string
	Kind Kind
	// Static is true for an executable without a program interpreter.
	Static bool
	// Needed lists the shared libraries of the dynamic section (DT_NEEDED), for reports.
	Needed []string
	// GoVersion and Settings are the Go build information, for Go binaries.
	GoVersion string
	Settings  map[string]string
	// Finding is the first rule that fails, as check-payload reports one per file; nil means the file passes.
	Finding *Finding
}

// MinGOFIPS140 is the lowest GOFIPS140 module version check-payload accepts: its config.toml's Go entry of
// fips_certified_modules (CMVP #5247), certified_artifact_min_version.
const MinGOFIPS140 = "v1.0.0"

// opensslDlopen is the function the golang-fips OpenSSL backend of Go 1.22 and newer links
// (requiredGolangSymbolsPost122 in check-payload).
const opensslDlopen = "vendor/github.com/golang-fips/openssl/v2.dlopen"

// Check applies check-payload's rules to the file at path. The error is for files that cannot be judged (unreadable,
// a Go binary older than 1.22 or without a readable pclntab), never for a failed rule: that is Result.Finding.
func Check(path string) (Result, error) {
	r := Result{Path: path}
	exe, err := elf.Open(path)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) || errors.Is(err, io.EOF) {
			r.Kind = NotExecutable
			return r, nil
		}
		return r, err
	}
	defer exe.Close()
	switch exe.Type {
	case elf.ET_EXEC:
	case elf.ET_DYN:
		if !isPIE(exe) {
			r.Kind = NotExecutable
			return r, nil
		}
	default:
		r.Kind = NotExecutable
		return r, nil
	}
	r.Static = true
	for _, p := range exe.Progs {
		if p.Type == elf.PT_INTERP {
			r.Static = false
		}
	}
	r.Needed, _ = exe.ImportedLibraries()

	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		r.Kind = NotGo
		if r.Static {
			r.Finding = &Finding{Rule: "ErrNotDynLinked", Detail: "the executable is statically linked (no program interpreter)"}
		}
		return r, nil
	}
	r.GoVersion = bi.GoVersion
	r.Settings = map[string]string{}
	for _, s := range bi.Settings {
		r.Settings[s.Key] = s.Value
	}
	minor, err := goMinor(bi.GoVersion)
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if minor < 22 {
		return r, fmt.Errorf("%s: built with %s: the rules are modelled for Go 1.22 and newer", path, bi.GoVersion)
	}
	funcs, err := goFuncs(exe)
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	r.Kind = GoOpenSSL
	if !slices.ContainsFunc(funcs, func(n string) bool { return strings.Contains(n, "crypto") }) {
		r.Kind = GoNoCrypto
	}
	fail := func(rule, format string, args ...any) (Result, error) {
		r.Finding = &Finding{Rule: rule, Detail: fmt.Sprintf(format, args...)}
		return r, nil
	}

	if r.Kind == GoOpenSSL && minor >= 26 {
		godebug := fips140Enabled(r.Settings)
		switch {
		case minor == 26 && !godebug:
			// Go 1.26 without fips140 in its GODEBUG: the OpenSSL rules below.
		case !godebug:
			return fail("ErrGoFIPSNotEnabled", "%s: no DefaultGODEBUG fips140=auto|on|only, which Go 1.27 and newer require", bi.GoVersion)
		case !certifiedModule(r.Settings["GOFIPS140"]):
			return fail("ErrGoFIPSNotCertified", "GOFIPS140=%q: want a module version of at least %s (e.g. GOFIPS140=v1.0.0), not off, latest or unset", r.Settings["GOFIPS140"], MinGOFIPS140)
		default:
			r.Kind = GoNativeFIPS
			return r, nil
		}
	}
	if r.Kind == GoOpenSSL {
		if r.Settings["CGO_ENABLED"] != "1" {
			return fail("ErrGoNotCgoEnabled", "build setting CGO_ENABLED=%q, want 1", r.Settings["CGO_ENABLED"])
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return r, err
		}
		if !bytes.Contains(data, []byte("cgo_init")) && !bytes.Contains(data, []byte("_cgo_topofstack")) {
			return fail("ErrGoNoCgoInit", "neither x_cgo_init nor _cgo_topofstack is in the file")
		}
		if !slices.Contains(funcs, opensslDlopen) {
			return fail("ErrGoMissingSymbols", "no function %s: the toolchain has no golang-fips OpenSSL backend", opensslDlopen)
		}
		if r.Static {
			return fail("ErrNotDynLinked", "the executable is statically linked (no program interpreter)")
		}
	}
	if f := tagFinding(r.Settings); f != nil {
		r.Finding = f
	}
	return r, nil
}

// tagFinding is validateGoTagsAndExperiment: the tag verdict, reported only when GOEXPERIMENT is set without
// strictfipsruntime.
func tagFinding(settings map[string]string) *Finding {
	exp, set := settings["GOEXPERIMENT"]
	if !set || strings.Contains(exp, "strictfipsruntime") {
		return nil
	}
	tags, ok := settings["-tags"]
	if !ok {
		return &Finding{Rule: "ErrGoNoTags", Warning: true, Detail: fmt.Sprintf("no build tags (GOEXPERIMENT=%s lacks strictfipsruntime): want -tags strictfipsruntime", exp)}
	}
	list := "," + tags + ","
	if strings.Contains(list, ",no_openssl,") {
		return &Finding{Rule: "ErrGoInvalidTag", Detail: fmt.Sprintf("build tag no_openssl in -tags=%s", tags)}
	}
	if !strings.Contains(list, ",strictfipsruntime,") {
		return &Finding{Rule: "ErrGoMissingTag", Warning: true, Detail: fmt.Sprintf("-tags=%s lacks strictfipsruntime (GOEXPERIMENT=%s lacks it too)", tags, exp)}
	}
	return nil
}

// fips140Enabled reports whether DefaultGODEBUG or GODEBUG turns Go's FIPS 140 mode on at run time.
func fips140Enabled(settings map[string]string) bool {
	for _, key := range []string{"DefaultGODEBUG", "GODEBUG"} {
		for _, kv := range strings.Split(settings[key], ",") {
			switch strings.TrimSpace(kv) {
			case "fips140=auto", "fips140=on", "fips140=only":
				return true
			}
		}
	}
	return false
}

var leadingSemver = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)

// certifiedModule reports whether a GOFIPS140 build setting names a module version of at least MinGOFIPS140.
// The build records the resolved version (GOFIPS140=v1.0.0 or certified is recorded as v1.0.0-c2097c7c), or
// "latest" for the tree's own crypto, which has no version and so fails.
func certifiedModule(value string) bool {
	m := leadingSemver.FindStringSubmatch(value)
	if m == nil {
		return false
	}
	want := leadingSemver.FindStringSubmatch(MinGOFIPS140)
	for i := 1; i <= 3; i++ {
		got, _ := strconv.Atoi(m[i])
		min, _ := strconv.Atoi(want[i])
		if got != min {
			return got > min
		}
	}
	return true
}

var goVersion = regexp.MustCompile(`^go1\.(\d+)`)

// goMinor is the minor release of a "go1.N[.P][ suffix]" version.
func goMinor(v string) (int, error) {
	m := goVersion.FindStringSubmatch(v)
	if m == nil {
		return 0, fmt.Errorf("Go version %q: want go1.N", v)
	}
	return strconv.Atoi(m[1])
}

// isPIE reports whether DT_FLAGS_1 has DF_1_PIE: the ET_DYN files check-payload treats as executables.
func isPIE(f *elf.File) bool {
	vals, err := f.DynValue(elf.DT_FLAGS_1)
	if err != nil {
		return false
	}
	for _, v := range vals {
		if elf.DynFlag1(v)&elf.DF_1_PIE != 0 {
			return true
		}
	}
	return false
}

// goFuncs lists the function names of the binary's pclntab, which survives -s -w.
func goFuncs(f *elf.File) ([]string, error) {
	text := f.Section(".text")
	if text == nil {
		return nil, errors.New("no .text section")
	}
	var tab *elf.Section
	for _, name := range []string{".gopclntab", ".data.rel.ro.gopclntab"} {
		if tab = f.Section(name); tab != nil {
			break
		}
	}
	if tab == nil {
		return nil, errors.New("no .gopclntab section")
	}
	data, err := tab.Data()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", tab.Name, err)
	}
	table, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", tab.Name, err)
	}
	if len(table.Funcs) == 0 {
		return nil, fmt.Errorf("%s lists no functions", tab.Name)
	}
	names := make([]string, len(table.Funcs))
	for i, fn := range table.Funcs {
		names[i] = fn.Name
	}
	return names, nil
}
