package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// File is one file of a catalog directory and its blobs, in order.
type File struct {
	Path  string
	Blobs []Blob
}

// ReadFile parses a catalog file: a YAML multi-document stream or a stream of JSON objects.
func ReadFile(path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	out := File{Path: path}
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var b Blob
		err := dec.Decode(&b)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return File{}, fmt.Errorf("%s: blob %d: %w", path, len(out.Blobs)+1, err)
		}
		if b == nil {
			continue
		}
		if s, _ := b["schema"].(string); s == "" {
			return File{}, fmt.Errorf("%s: blob %d has no schema: want olm.package, olm.channel, olm.bundle or another olm.* schema", path, len(out.Blobs)+1)
		}
		out.Blobs = append(out.Blobs, b)
	}
}

// Write writes the file's blobs as a YAML multi-document stream (JSON for *.json files).
func (f File) Write() error {
	var buf bytes.Buffer
	for _, b := range f.Blobs {
		if strings.HasSuffix(f.Path, ".json") {
			j, err := json.MarshalIndent(b, "", "    ")
			if err != nil {
				return err
			}
			buf.Write(j)
			buf.WriteByte('\n')
			continue
		}
		y, err := yaml.Marshal(b)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(y)
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(f.Path, buf.Bytes(), 0o644)
}

// findPackageFile returns the file of dir that holds blobs of pkg, or a new file <dir>/<pkg>/catalog.yaml.
func findPackageFile(dir, pkg string) (File, error) {
	var found []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return fs.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(p)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		f, err := ReadFile(p)
		if err != nil {
			return err
		}
		for _, b := range f.Blobs {
			if blobPackage(b) == pkg {
				found = append(found, f)
				break
			}
		}
		return nil
	})
	if err != nil {
		return File{}, err
	}
	switch len(found) {
	case 0:
		return File{Path: filepath.Join(dir, pkg, "catalog.yaml")}, nil
	case 1:
		return found[0], nil
	}
	paths := make([]string, 0, len(found))
	for _, f := range found {
		paths = append(paths, f.Path)
	}
	return File{}, fmt.Errorf("package %s is spread over %s: keep it in one file so that its channels can be updated", pkg, strings.Join(paths, ", "))
}

// blobPackage is the package a blob belongs to: the name of an olm.package, the package of anything else.
func blobPackage(b Blob) string {
	if b["schema"] == "olm.package" {
		s, _ := b["name"].(string)
		return s
	}
	s, _ := b["package"].(string)
	return s
}

// Package is the olm.package of operator/manifests/package.yaml.
type Package struct {
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Description    string `json:"description,omitempty"`
}

// ReadPackage reads package.yaml.
func ReadPackage(path string) (Package, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Package{}, err
	}
	var p Package
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return Package{}, fmt.Errorf("%s: %w", path, err)
	}
	if p.Name == "" || p.DefaultChannel == "" {
		return Package{}, fmt.Errorf("%s: name and defaultChannel are required", path)
	}
	return p, nil
}

// AddBundle adds b to f: the package blob when missing, b's blob (replacing one of the same name), and an entry
// for b in each of its channels that replaces the channel's current head and carries the CSV's skipRange.
func AddBundle(f *File, pkg Package, b Bundle) error {
	if pkg.Name != b.Package {
		return fmt.Errorf("the bundle is for package %s, package.yaml names %s", b.Package, pkg.Name)
	}
	if indexOf(f.Blobs, "olm.package", "", pkg.Name) < 0 {
		p := Blob{"schema": "olm.package", "name": pkg.Name, "defaultChannel": pkg.DefaultChannel}
		if pkg.Description != "" {
			p["description"] = pkg.Description
		}
		f.Blobs = append([]Blob{p}, f.Blobs...)
	}
	versions := map[string]string{b.Name: b.Version}
	for _, blob := range f.Blobs {
		if blob["schema"] == "olm.bundle" && blobPackage(blob) == b.Package {
			n, _ := blob["name"].(string)
			versions[n] = bundleVersion(blob)
		}
	}
	for _, ch := range b.Channels {
		i := indexOf(f.Blobs, "olm.channel", b.Package, ch)
		if i < 0 {
			f.Blobs = append(f.Blobs, Blob{"schema": "olm.channel", "package": b.Package, "name": ch, "entries": []any{}})
			i = len(f.Blobs) - 1
		}
		entries, err := addEntry(f.Blobs[i], b, versions)
		if err != nil {
			return fmt.Errorf("%s: channel %s: %w", f.Path, ch, err)
		}
		f.Blobs[i]["entries"] = entries
	}
	if i := indexOf(f.Blobs, "olm.bundle", b.Package, b.Name); i >= 0 {
		f.Blobs[i] = b.Blob
	} else {
		f.Blobs = append(f.Blobs, b.Blob)
	}
	return nil
}

func indexOf(blobs []Blob, schema, pkg, name string) int {
	for i, b := range blobs {
		if b["schema"] == schema && b["name"] == name && (pkg == "" || b["package"] == pkg) {
			return i
		}
	}
	return -1
}

func bundleVersion(b Blob) string {
	props, _ := b["properties"].([]any)
	for _, p := range props {
		m, _ := p.(map[string]any)
		if m["type"] == "olm.package" {
			v, _ := m["value"].(map[string]any)
			s, _ := v["version"].(string)
			return s
		}
	}
	return ""
}

// addEntry returns the channel's entries with one for b: unchanged when b is already listed (its skipRange is
// refreshed), otherwise appended with replaces set to the channel head, which must be older than b.
func addEntry(channel Blob, b Bundle, versions map[string]string) ([]any, error) {
	entries, _ := channel["entries"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["name"] == b.Name {
			if b.SkipRange != "" {
				m["skipRange"] = b.SkipRange
			}
			return entries, nil
		}
	}
	head, err := channelHead(entries)
	if err != nil {
		return nil, err
	}
	entry := Blob{"name": b.Name}
	if head != "" {
		hv, err1 := semver.Parse(versions[head])
		nv, err2 := semver.Parse(b.Version)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("comparing the head %s (version %q) with %s (version %q): want semantic versions", head, versions[head], b.Name, b.Version)
		}
		if !nv.GT(hv) {
			return nil, fmt.Errorf("the channel head %s has version %s, not older than %s: a new bundle must have a higher version (raise operator/VERSION or tag operator/vX.Y.Z)", head, hv, nv)
		}
		entry["replaces"] = head
	}
	if b.SkipRange != "" {
		entry["skipRange"] = b.SkipRange
	}
	return append(entries, entry), nil
}

// channelHead is the one entry that no other entry replaces or skips; "" for an empty channel.
func channelHead(entries []any) (string, error) {
	replaced := map[string]bool{}
	var names []string
	for _, e := range entries {
		m, _ := e.(map[string]any)
		n, _ := m["name"].(string)
		names = append(names, n)
		if r, _ := m["replaces"].(string); r != "" {
			replaced[r] = true
		}
		skips, _ := m["skips"].([]any)
		for _, s := range skips {
			if s, ok := s.(string); ok {
				replaced[s] = true
			}
		}
	}
	var heads []string
	for _, n := range names {
		if !replaced[n] {
			heads = append(heads, n)
		}
	}
	sort.Strings(heads)
	switch {
	case len(names) == 0:
		return "", nil
	case len(heads) == 1:
		return heads[0], nil
	}
	return "", fmt.Errorf("the channel has %d heads (%s): want exactly one entry that no other replaces", len(heads), strings.Join(heads, ", "))
}
