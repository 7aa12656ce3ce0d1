package efslayout

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
)

// Layout is the content of layout.json.
type Layout struct {
	Files []File `json:"files"`
	Trees []Tree `json:"trees"`
	Dirs  []Dir  `json:"dirs"`
}

// File installs one file.
type File struct {
	Src  string `json:"src"`
	Dest string `json:"dest"`
	Mode string `json:"mode"`
}

// Tree installs a directory's files recursively; directories get 0755, files Mode. Exclude holds glob patterns
// matched against each path element (a matching directory is skipped whole).
type Tree struct {
	Src     string   `json:"src"`
	Dest    string   `json:"dest"`
	Mode    string   `json:"mode"`
	Exclude []string `json:"exclude"`
}

// Dir creates an empty directory.
type Dir struct {
	Dest string `json:"dest"`
	Mode string `json:"mode"`
}

// Read parses the layout file at name.
func Read(name string) (Layout, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return Layout{}, err
	}
	var l Layout
	if err := json.Unmarshal(data, &l); err != nil {
		return Layout{}, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// ParseMode reads an octal permission string such as "0755".
func ParseMode(field, s string) (int64, error) {
	m, err := strconv.ParseInt(s, 8, 32)
	if err != nil || m < 0 || m > 0o7777 {
		return 0, fmt.Errorf("%s mode %q: want octal permission bits, e.g. \"0644\"", field, s)
	}
	return m, nil
}

// Entries expands the layout against the efs-utils source directory srcDir into layer entries with absolute
// in-image paths. Every source must exist; a missing one is named with the layout field it came from.
func (l Layout) Entries(srcDir string) ([]layer.Entry, error) {
	var out []layer.Entry
	for i, f := range l.Files {
		field := fmt.Sprintf("files[%d] (%s)", i, f.Dest)
		mode, err := ParseMode(field, f.Mode)
		if err != nil {
			return nil, err
		}
		src := filepath.Join(srcDir, filepath.FromSlash(f.Src))
		info, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("efs-utils layout %s: source %s: %w", field, f.Src, err)
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("efs-utils layout %s: source %s is not a regular file", field, f.Src)
		}
		out = append(out, layer.Entry{Path: f.Dest, Kind: layer.File, Mode: mode, Source: src})
	}
	for i, t := range l.Trees {
		entries, err := t.entries(fmt.Sprintf("trees[%d] (%s)", i, t.Dest), srcDir)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
	for i, d := range l.Dirs {
		mode, err := ParseMode(fmt.Sprintf("dirs[%d] (%s)", i, d.Dest), d.Mode)
		if err != nil {
			return nil, err
		}
		out = append(out, layer.Entry{Path: d.Dest, Kind: layer.Dir, Mode: mode})
	}
	sort.Slice(out, func(a, b int) bool { return layer.Clean(out[a].Path) < layer.Clean(out[b].Path) })
	return out, nil
}

func (t Tree) entries(field, srcDir string) ([]layer.Entry, error) {
	mode, err := ParseMode(field, t.Mode)
	if err != nil {
		return nil, err
	}
	for _, pat := range t.Exclude {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("efs-utils layout %s: exclude %q: %w", field, pat, err)
		}
	}
	root := filepath.Join(srcDir, filepath.FromSlash(t.Src))
	var out []layer.Entry
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("efs-utils layout %s: %w", field, err)
		}
		if excluded(d.Name(), t.Exclude) && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		dest := path.Join(t.Dest, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			out = append(out, layer.Entry{Path: dest, Kind: layer.Dir, Mode: 0o755})
		case d.Type().IsRegular():
			out = append(out, layer.Entry{Path: dest, Kind: layer.File, Mode: mode, Source: p})
		default:
			return fmt.Errorf("efs-utils layout %s: %s is neither a file nor a directory", field, p)
		}
		return nil
	})
	return out, err
}

func excluded(name string, patterns []string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return strings.HasPrefix(name, ".")
}
