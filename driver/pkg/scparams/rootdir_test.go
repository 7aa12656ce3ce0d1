package scparams

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// TestRootDir states upstream's naming (driver-behaviour.md §9.5, controller.go): without subPathPattern the
// directory is /<basePath>/<volume name>, no suffix; with it, the pattern plus a suffix unless
// ensureUniqueDirectory parses as false. Ours differ only where noted: the suffix is derived from the volume
// name (upstream: random), and paths over 100 characters are shortened (upstream: InvalidArgument).
func TestRootDir(t *testing.T) {
	suffix := uniqueSuffix("pvc-1")
	long := "pvc-" + strings.Repeat("x", 124) // csi-sanity's maximum-length name: 128 characters
	tests := []struct {
		name    string
		params  map[string]string
		volume  string
		want    string
		wantErr string
	}{
		{"default: volume name, no suffix", base(), "", "/pvc-1", ""},
		{"base path", base("basePath", "/dyn"), "", "/dyn/pvc-1", ""},
		{"ensureUniqueDirectory ignored without a pattern", base("ensureUniqueDirectory", "true"), "", "/pvc-1", ""},
		{"pattern PV name: suffix by default", base("subPathPattern", "${.PV.name}"), "", "/pv-1-" + suffix, ""},
		{"pattern, ensureUnique false", base("subPathPattern", "${.PV.name}", "ensureUniqueDirectory", "false"), "", "/pv-1", ""},
		{"pattern, ensureUnique not a bool counts as true", base("subPathPattern", "${.PV.name}", "ensureUniqueDirectory", "yes"), "", "/pv-1-" + suffix, ""},
		{"pattern, ensureUnique 0", base("subPathPattern", "x", "ensureUniqueDirectory", "0"), "", "/x", ""},
		{"ns and name", base("subPathPattern", "${.PVC.namespace}/${.PVC.name}", "ensureUniqueDirectory", "false"), "", "/ns/claim", ""},
		{"empty pattern unique", base("subPathPattern", ""), "", "/" + suffix, ""},
		{"slash pattern unique", base("subPathPattern", "/"), "", "/" + suffix, ""},
		{"slash pattern no unique", base("subPathPattern", "/", "ensureUniqueDirectory", "false"), "", "", `file system root "/"`},
		{"empty pattern no unique", base("subPathPattern", "", "ensureUniqueDirectory", "false"), "", "", `file system root "/"`},
		{"dot pattern", base("subPathPattern", ".", "ensureUniqueDirectory", "false"), "", "", `no "." or ".." elements`},
		{"too deep", base("subPathPattern", "a/b/c/d/e/f", "ensureUniqueDirectory", "false"), "", "", "want at most 5"},
		{"missing metadata", base("subPathPattern", "${.PVC.name}", ParamPVCName, ""), "", "", "--extra-create-metadata"},
		{"pv name falls back to volume name", base("subPathPattern", "${.PV.name}", "ensureUniqueDirectory", "false", ParamPVName, ""), "", "/pvc-1", ""},
		{"maximum-length name is shortened", base(), long, "/" + long[:82] + "-" + hashOf("/"+long), ""},
		{"maximum-length name under a 25-character basePath", base("basePath", strings.Repeat("b", 25)), long,
			"/" + strings.Repeat("b", 25) + "/" + long[:56] + "-" + hashOf("/"+strings.Repeat("b", 25)+"/"+long), ""},
		{"long pattern is shortened", base("subPathPattern", strings.Repeat("a", 101), "ensureUniqueDirectory", "false"), "",
			"/" + strings.Repeat("a", 82) + "-" + hashOf("/"+strings.Repeat("a", 101)), ""},
		{"basePath leaves no room", base("basePath", strings.Repeat("b", 90)), long, "", "cannot be shortened"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base(ParamPVName, "pv-1", ParamPVCName, "claim", ParamPVCNamespace, "ns")
			for k, v := range tt.params {
				in[k] = v
			}
			p, err := ParseParams(in)
			if err != nil {
				t.Fatal(err)
			}
			vol := tt.volume
			if vol == "" {
				vol = "pvc-1"
			}
			got, err := RootDir(p, vol)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidParameter) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("RootDir = %q, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("RootDir = %q, %v; want %q", got, err, tt.want)
			}
			if len(got) > maxRootDirLen {
				t.Fatalf("RootDir = %q: %d characters, over %d", got, len(got), maxRootDirLen)
			}
			checkRootDir(t, got)
		})
	}
}

// TestRootDirShortenedNamesDiffer: two maximum-length names that differ only after the kept prefix get different
// directories, and a retry of the same name gets the same one.
func TestRootDirShortenedNamesDiffer(t *testing.T) {
	p, err := ParseParams(base())
	if err != nil {
		t.Fatal(err)
	}
	a, b := "pvc-"+strings.Repeat("x", 123)+"a", "pvc-"+strings.Repeat("x", 123)+"b"
	da, _ := RootDir(p, a)
	db, _ := RootDir(p, b)
	again, _ := RootDir(p, a)
	if da == db || da != again {
		t.Fatalf("RootDir(a) = %q, RootDir(b) = %q, again %q: want distinct and stable", da, db, again)
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

func TestClientToken(t *testing.T) {
	p := Params{ReuseAccessPoint: true, PVCName: "data", PVCNamespace: "a", ReuseTokenFormat: TokenNamespaced}
	q := p
	q.PVCNamespace = "b"
	up := p
	up.ReuseTokenFormat = TokenUpstream
	tokens := map[string]string{
		"plain":        ClientToken(Params{}, "fs-0123abcd", "pvc-1"),
		"long":         ClientToken(Params{}, "fs-0123abcd", strings.Repeat("x", 70)),
		"ns a":         ClientToken(p, "fs-0123abcd", "pvc-1"),
		"ns b":         ClientToken(q, "fs-0123abcd", "pvc-1"),
		"other fs":     ClientToken(p, "fs-0123abce", "pvc-1"),
		"upstream":     ClientToken(up, "fs-0123abcd", "pvc-1"),
		"upstream fs2": ClientToken(up, "fs-0123abce", "pvc-2"),
	}
	if tokens["plain"] != "pvc-1" {
		t.Errorf("plain token = %q, want the volume name", tokens["plain"])
	}
	// sha256("data"), what the upstream driver sent for a claim named "data".
	if tokens["upstream"] != "3a6eb0790f39ac87c94f3856b2dd2c5d110e6811602261a9a923d3bb23adc8b7" {
		t.Errorf("upstream token = %q", tokens["upstream"])
	}
	if tokens["upstream"] != tokens["upstream fs2"] {
		t.Errorf("upstream format must ignore FS and volume name")
	}
	seen := map[string]string{}
	for name, tok := range tokens {
		if len(tok) > 64 || tok == "" {
			t.Errorf("%s: token %q length %d, want 1..64", name, tok, len(tok))
		}
		if name == "upstream fs2" {
			continue
		}
		if other, dup := seen[tok]; dup {
			t.Errorf("%s and %s share token %q", name, other, tok)
		}
		seen[tok] = name
	}
}
