package layer

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/rootfs"
)

// Kind is what an entry creates.
type Kind int

// Entry kinds. A Whiteout hides the path of a lower layer (OCI ".wh." file).
const (
	File Kind = iota
	Dir
	Symlink
	Whiteout
)

// String names the kind in lower case (file, dir, symlink, whiteout).
func (k Kind) String() string {
	return [...]string{"file", "dir", "symlink", "whiteout"}[k]
}

// Entry is one path of a layer. Paths are in-image paths; "/usr/bin/x" and "usr/bin/x" are the same.
type Entry struct {
	Path string
	Kind Kind
	// Mode holds permission bits (0o7777). Ignored for symlinks and whiteouts.
	Mode int64
	// Data is the content of a file held in memory; Source names a file on disk to read instead.
	Data   []byte
	Source string
	// Link is a symlink's target.
	Link string
}

// Clean returns p in the form layers use: relative, slash-separated, no "." or ".." elements.
func Clean(p string) string {
	c := path.Clean("/" + p)
	return strings.TrimPrefix(c, "/")
}

// validate checks the entries and returns them with clean paths, sorted by path.
func validate(entries []Entry) ([]Entry, error) {
	out := make([]Entry, len(entries))
	seen := map[string]bool{}
	for i, e := range entries {
		e.Path = Clean(e.Path)
		switch {
		case e.Path == "":
			return nil, fmt.Errorf("layer entry %d: path %q: want a path below /", i, entries[i].Path)
		case seen[e.Path]:
			return nil, fmt.Errorf("layer entry /%s: listed twice", e.Path)
		case e.Kind == File && e.Data != nil && e.Source != "":
			return nil, fmt.Errorf("layer entry /%s: has both Data and Source; want one", e.Path)
		case e.Kind == Symlink && e.Link == "":
			return nil, fmt.Errorf("layer entry /%s: symlink without a target", e.Path)
		case e.Mode&^0o7777 != 0:
			return nil, fmt.Errorf("layer entry /%s: mode %o: want permission bits only (at most 07777)", e.Path, e.Mode)
		case strings.HasPrefix(path.Base(e.Path), ".wh."):
			return nil, fmt.Errorf("layer entry /%s: names starting with .wh. are reserved for whiteouts; use Kind Whiteout", e.Path)
		}
		seen[e.Path] = true
		out[i] = e
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out, nil
}

// Place fits entries onto a base file system the way a Containerfile COPY does: a symlinked directory on the way
// to an entry is followed (RHEL's /sbin → usr/sbin, /var/run → ../run), so the layer never replaces the link with
// a directory; and each parent directory that exists neither in the base nor among the entries is added with mode
// 0755. A nil base is an empty file system. The result is sorted by path.
func Place(entries []Entry, base *rootfs.FS) ([]Entry, error) {
	if base == nil {
		base = rootfs.New()
	}
	placed := make([]Entry, 0, len(entries))
	have := map[string]bool{}
	for _, e := range entries {
		orig := Clean(e.Path)
		p, err := base.ResolveParent(orig)
		if err != nil {
			return nil, err
		}
		if have[p] {
			return nil, fmt.Errorf("layer entry /%s: another entry already lands on /%s in the base", orig, p)
		}
		e.Path = p
		have[p] = true
		placed = append(placed, e)
	}
	var parents []Entry
	for _, e := range placed {
		for dir := path.Dir(e.Path); dir != "." && !have[dir]; dir = path.Dir(dir) {
			n, ok := base.Lookup(dir)
			if ok && n.Kind == rootfs.Dir {
				break
			}
			if ok {
				return nil, fmt.Errorf("layer entry /%s: /%s exists in the base and is not a directory", e.Path, dir)
			}
			have[dir] = true
			parents = append(parents, Entry{Path: dir, Kind: Dir, Mode: 0o755})
		}
	}
	return validate(append(placed, parents...))
}
