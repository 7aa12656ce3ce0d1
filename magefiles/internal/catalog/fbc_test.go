package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChannelHead(t *testing.T) {
	e := func(name, replaces string, skips ...string) any {
		m := map[string]any{"name": name}
		if replaces != "" {
			m["replaces"] = replaces
		}
		if len(skips) > 0 {
			var s []any
			for _, x := range skips {
				s = append(s, x)
			}
			m["skips"] = s
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		entries []any
		want    string
		wantErr string
	}{
		{"empty", nil, "", ""},
		{"one", []any{e("a.v1", "")}, "a.v1", ""},
		{"chain", []any{e("a.v1", ""), e("a.v2", "a.v1"), e("a.v3", "a.v2")}, "a.v3", ""},
		{"skips", []any{e("a.v1", ""), e("a.v2", "", "a.v1")}, "a.v2", ""},
		{"two heads", []any{e("a.v1", ""), e("a.v2", "")}, "", "2 heads (a.v1, a.v2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := channelHead(tc.entries)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("head %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func testBundle(version string) Bundle {
	name := "aws-efs-csi-driver-operator.v" + version
	return Bundle{
		Name: name, Package: "aws-efs-csi-driver-operator", Version: version, SkipRange: ">=0.0.0-0 <" + version,
		Channels: []string{"stable"}, DefaultChannel: "stable",
		Blob: Blob{"schema": "olm.bundle", "name": name, "package": "aws-efs-csi-driver-operator", "image": "quay.io/o/b@sha256:" + strings.Repeat("a", 64),
			"properties": []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": "aws-efs-csi-driver-operator", "version": version}}}},
	}
}

// TestAddBundleKeepsOtherPackages adds to an existing catalog file that holds another package too, in JSON.
func TestAddBundleKeepsOtherPackages(t *testing.T) {
	dir := t.TempDir()
	other := `{"schema": "olm.package", "name": "other", "defaultChannel": "alpha"}
{"schema": "olm.channel", "package": "other", "name": "alpha", "entries": [{"name": "other.v1"}]}
{"schema": "olm.bundle", "package": "other", "name": "other.v1", "image": "quay.io/o/other@sha256:` + strings.Repeat("b", 64) + `", "properties": []}
`
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := Package{Name: "aws-efs-csi-driver-operator", DefaultChannel: "stable"}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		f, err := findPackageFile(dir, pkg.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := AddBundle(&f, pkg, testBundle(v)); err != nil {
			t.Fatal(err)
		}
		if err := Check(f.Blobs, pkg.Name); err != nil {
			t.Fatal(err)
		}
		if err := f.Write(); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	if string(data) != other {
		t.Errorf("the other package's file changed:\n%s", data)
	}
	f, err := ReadFile(filepath.Join(dir, "aws-efs-csi-driver-operator", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var schemas []string
	for _, b := range f.Blobs {
		schemas = append(schemas, b["schema"].(string))
	}
	if got := strings.Join(schemas, ","); got != "olm.package,olm.channel,olm.bundle,olm.bundle" {
		t.Errorf("blobs %s", got)
	}
	entries, _ := json.Marshal(f.Blobs[1]["entries"])
	if !strings.Contains(string(entries), `"replaces":"aws-efs-csi-driver-operator.v1.0.0"`) {
		t.Errorf("entries %s: want v1.1.0 to replace v1.0.0", entries)
	}
	// An older bundle is refused, naming the head.
	if err := AddBundle(&f, pkg, testBundle("0.9.0")); err == nil || !strings.Contains(err.Error(), "head aws-efs-csi-driver-operator.v1.1.0 has version 1.1.0") {
		t.Fatalf("older bundle: error %v", err)
	}
}

func TestCheckFindsProblems(t *testing.T) {
	blobs := []Blob{
		{"schema": "olm.package", "name": "p", "defaultChannel": "stable"},
		{"schema": "olm.channel", "package": "p", "name": "fast", "entries": []any{map[string]any{"name": "p.v2"}}},
		{"schema": "olm.bundle", "package": "p", "name": "p.v1"},
	}
	err := Check(blobs, "p")
	for _, want := range []string{`default channel "stable" has no olm.channel`, "entry p.v2 has no olm.bundle", "bundle p.v1 is in no channel"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}

func TestReadFileRejectsBlobsWithoutSchema(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("---\nname: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "blob 1 has no schema") {
		t.Fatalf("error %v", err)
	}
}

// FuzzReadFile checks that no catalog file makes the parser panic, and that what it reads writes back to the same
// blobs.
func FuzzReadFile(f *testing.F) {
	f.Add("---\nschema: olm.package\nname: p\ndefaultChannel: stable\n")
	f.Add(`{"schema": "olm.channel", "package": "p", "name": "s", "entries": [{"name": "p.v1"}]}`)
	f.Add("---\nschema: olm.bundle\n---\n")
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := ReadFile(p)
		if err != nil {
			return
		}
		file.Path = filepath.Join(dir, "out.yaml")
		if err := file.Write(); err != nil {
			t.Fatalf("writing %d blobs: %v", len(file.Blobs), err)
		}
		back, err := ReadFile(file.Path)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		a, _ := json.Marshal(file.Blobs)
		b, _ := json.Marshal(back.Blobs)
		if string(a) != string(b) {
			t.Fatalf("round trip changed the blobs:\n%s\n%s", a, b)
		}
	})
}
