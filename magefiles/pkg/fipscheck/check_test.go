package fipscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Programs compiled by the tests. "crypto" hashes and resolves a name, so with cgo it links the C library
// dynamically, as the driver and the operator do; "plain" uses no crypto.
var sources = map[string]string{
	"crypto": "package main\n\nimport (\n\t\"crypto/sha256\"\n\t\"fmt\"\n\t\"net\"\n)\n\n" +
		"func main() {\n\tfmt.Printf(\"%x\\n\", sha256.Sum256([]byte(\"x\")))\n\t_, _ = net.LookupHost(\"localhost\")\n}\n",
	// The same with Go's FIPS mode switched off in the binary's default GODEBUG.
	"crypto-fips-off": "//go:debug fips140=off\npackage main\n\nimport (\n\t\"crypto/sha256\"\n\t\"fmt\"\n)\n\n" +
		"func main() { fmt.Printf(\"%x\\n\", sha256.Sum256([]byte(\"x\"))) }\n",
	"plain": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
}

// goBinary compiles sources[program] with the given environment and build flags, the way a builder would.
func goBinary(t *testing.T, program string, env []string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(sources[program]), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "p")
	cmd := exec.CommandContext(t.Context(), "go", append(append([]string{"build", "-trimpath", "-o", out}, flags...), ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=-buildvcs=false", "GOEXPERIMENT=", "GOFIPS140=off"}, env...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s %v: %v\n%s", program, env, err, b)
	}
	return out
}

// cBinary compiles a C program with gcc and the given flags.
func cBinary(t *testing.T, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte("#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "p")
	if b, err := exec.CommandContext(t.Context(), "gcc", append(flags, "-o", out, src)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", flags, err, b)
	}
	return out
}

func TestCheck(t *testing.T) {
	const fips = "GOFIPS140=v1.0.0"
	cases := []struct {
		name    string
		build   func(t *testing.T) string
		kind    Kind
		static  bool
		rule    string // "" means the file passes
		warning bool
	}{
		{"go without cgo", func(t *testing.T) string { return goBinary(t, "crypto", []string{"CGO_ENABLED=0"}) },
			GoOpenSSL, true, "ErrGoNotCgoEnabled", false},
		{"go with cgo, dynamic, upstream crypto", func(t *testing.T) string {
			return goBinary(t, "crypto", []string{"CGO_ENABLED=1"}, "-tags", "strictfipsruntime")
		}, GoOpenSSL, false, "ErrGoMissingSymbols", false},
		{"go native FIPS module, cgo, dynamic, stripped", func(t *testing.T) string {
			return goBinary(t, "crypto", []string{"CGO_ENABLED=1", fips}, "-tags", "strictfipsruntime", "-ldflags=-s -w -buildid=")
		}, GoNativeFIPS, false, "", false},
		{"go native FIPS module, static: the OpenSSL rules do not apply", func(t *testing.T) string {
			return goBinary(t, "crypto", []string{"CGO_ENABLED=0", fips})
		}, GoNativeFIPS, true, "", false},
		{"go native FIPS module, no tags while GOEXPERIMENT lacks strictfipsruntime", func(t *testing.T) string {
			return goBinary(t, "crypto", []string{"CGO_ENABLED=0", fips, "GOEXPERIMENT=jsonv2"})
		}, GoNativeFIPS, true, "", false},
		{"go native FIPS module latest: no certified version", func(t *testing.T) string {
			return goBinary(t, "crypto", []string{"CGO_ENABLED=1", "GOFIPS140=latest"})
		}, GoOpenSSL, false, "ErrGoFIPSNotCertified", false},
		{"go FIPS module built in but fips140=off: the OpenSSL rules apply", func(t *testing.T) string {
			return goBinary(t, "crypto-fips-off", []string{"CGO_ENABLED=0", fips})
		}, GoOpenSSL, true, "ErrGoNotCgoEnabled", false},
		{"go without crypto, no GOEXPERIMENT", func(t *testing.T) string { return goBinary(t, "plain", []string{"CGO_ENABLED=0"}) },
			GoNoCrypto, true, "", false},
		{"go without crypto, GOEXPERIMENT without strictfipsruntime, no tags", func(t *testing.T) string {
			return goBinary(t, "plain", []string{"CGO_ENABLED=0", "GOEXPERIMENT=jsonv2"})
		}, GoNoCrypto, true, "ErrGoNoTags", true},
		{"go without crypto, GOEXPERIMENT without strictfipsruntime, other tags", func(t *testing.T) string {
			return goBinary(t, "plain", []string{"CGO_ENABLED=0", "GOEXPERIMENT=jsonv2"}, "-tags", "foo")
		}, GoNoCrypto, true, "ErrGoMissingTag", true},
		{"go without crypto, GOEXPERIMENT without strictfipsruntime, no_openssl", func(t *testing.T) string {
			return goBinary(t, "plain", []string{"CGO_ENABLED=0", "GOEXPERIMENT=jsonv2"}, "-tags", "no_openssl,strictfipsruntime")
		}, GoNoCrypto, true, "ErrGoInvalidTag", false},
		{"go without crypto, GOEXPERIMENT without strictfipsruntime, strictfipsruntime tag", func(t *testing.T) string {
			return goBinary(t, "plain", []string{"CGO_ENABLED=0", "GOEXPERIMENT=jsonv2"}, "-tags", "strictfipsruntime")
		}, GoNoCrypto, true, "", false},
		{"c, dynamic PIE", func(t *testing.T) string { return cBinary(t, "-pie", "-fPIE") }, NotGo, false, "", false},
		{"c, dynamic, not PIE", func(t *testing.T) string { return cBinary(t, "-no-pie") }, NotGo, false, "", false},
		{"c, static", func(t *testing.T) string { return cBinary(t, "-static") }, NotGo, true, "ErrNotDynLinked", false},
		{"c, shared library", func(t *testing.T) string { return cBinary(t, "-shared", "-fPIC") }, NotExecutable, false, "", false},
		{"text file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "script")
			if err := os.WriteFile(p, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, NotExecutable, false, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Check(tc.build(t))
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != tc.kind {
				t.Errorf("Kind = %q, want %q (settings %v)", r.Kind, tc.kind, r.Settings)
			}
			if tc.kind != NotExecutable && r.Static != tc.static {
				t.Errorf("Static = %v, want %v", r.Static, tc.static)
			}
			switch {
			case tc.rule == "" && r.Finding != nil:
				t.Errorf("finding %s, want none (settings %v)", r.Finding, r.Settings)
			case tc.rule != "" && r.Finding == nil:
				t.Errorf("no finding, want %s (settings %v)", tc.rule, r.Settings)
			case tc.rule != "" && (r.Finding.Rule != tc.rule || r.Finding.Warning != tc.warning):
				t.Errorf("finding %s, want %s (warning %v)", r.Finding, tc.rule, tc.warning)
			}
			if tc.kind != NotExecutable && !tc.static && !slices.Contains(r.Needed, "libc.so.6") {
				t.Errorf("DT_NEEDED = %v, want libc.so.6 among them", r.Needed)
			}
		})
	}
}

func TestCertifiedModule(t *testing.T) {
	for value, want := range map[string]bool{
		"v1.0.0-c2097c7c": true, // what GOFIPS140=v1.0.0 and GOFIPS140=certified record
		"v1.26.0":         true, // GOFIPS140=inprocess
		"v1.0.0":          true,
		"1.2.3":           true,
		"v0.9.9":          false,
		"latest":          false,
		"off":             false,
		"":                false,
	} {
		if got := certifiedModule(value); got != want {
			t.Errorf("certifiedModule(%q) = %v, want %v", value, got, want)
		}
	}
}

func TestFips140Enabled(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]string
		want     bool
	}{
		{map[string]string{"DefaultGODEBUG": "fips140=on"}, true},
		{map[string]string{"DefaultGODEBUG": "asynctimerchan=1, fips140=only"}, true},
		{map[string]string{"GODEBUG": "fips140=auto"}, true},
		{map[string]string{"DefaultGODEBUG": "fips140=off"}, false},
		{map[string]string{"GOFIPS140": "v1.0.0-c2097c7c"}, false},
		{nil, false},
	} {
		if got := fips140Enabled(tc.settings); got != tc.want {
			t.Errorf("fips140Enabled(%v) = %v, want %v", tc.settings, got, tc.want)
		}
	}
}

func TestGoMinor(t *testing.T) {
	for v, want := range map[string]int{"go1.26.8": 26, "go1.22": 22, "go1.27rc1": 27, "go1.25.3 X:strictfipsruntime": 25} {
		if got, err := goMinor(v); err != nil || got != want {
			t.Errorf("goMinor(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	if _, err := goMinor("devel +abc"); err == nil || !strings.Contains(err.Error(), "want go1.N") {
		t.Errorf("goMinor(devel) error = %v, want one naming the accepted form", err)
	}
}
