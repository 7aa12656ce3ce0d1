package provision

import (
	"errors"
	"strings"
	"testing"
)

func TestRootDir(t *testing.T) {
	suffix := uniqueSuffix("pvc-1")
	tests := []struct {
		name    string
		params  map[string]string
		want    string
		wantErr string
	}{
		{"default", base(), "/pv-1-" + suffix, ""},
		{"base path", base("basePath", "/dyn"), "/dyn/pv-1-" + suffix, ""},
		{"no unique", base("ensureUniqueDirectory", "false"), "/pv-1", ""},
		{"ns and name", base("subPathPattern", "${.PVC.namespace}/${.PVC.name}", "ensureUniqueDirectory", "false"), "/ns/claim", ""},
		{"empty pattern unique", base("subPathPattern", ""), "/" + suffix, ""},
		{"slash pattern unique", base("subPathPattern", "/"), "/" + suffix, ""},
		{"slash pattern no unique", base("subPathPattern", "/", "ensureUniqueDirectory", "false"), "", `file system root "/"`},
		{"empty pattern no unique", base("subPathPattern", "", "ensureUniqueDirectory", "false"), "", `file system root "/"`},
		{"dot pattern", base("subPathPattern", ".", "ensureUniqueDirectory", "false"), "", `no "." or ".." elements`},
		{"too long", base("subPathPattern", strings.Repeat("a", 101), "ensureUniqueDirectory", "false"), "", "want at most 100"},
		{"too deep", base("subPathPattern", "a/b/c/d/e/f", "ensureUniqueDirectory", "false"), "", "want at most 5"},
		{"missing metadata", base("subPathPattern", "${.PVC.name}", ParamPVCName, ""), "", "--extra-create-metadata"},
		{"pv name falls back to volume name", base("ensureUniqueDirectory", "false", ParamPVName, ""), "/pvc-1", ""},
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
			got, err := RootDir(p, "pvc-1")
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidParameter) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("RootDir = %q, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("RootDir = %q, %v; want %q", got, err, tt.want)
			}
			checkRootDir(t, got)
		})
	}
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
