package rootfs

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Kind is the type of a file system node.
type Kind int

// The node kinds an index records. Hard links are recorded as files, devices and fifos as Other.
const (
	File Kind = iota
	Dir
	Symlink
	Other
)

// Node is what the index knows about one path.
type Node struct {
	Kind Kind
	// Mode holds the permission bits (with setuid, setgid and sticky).
	Mode int64
	// Link is the target of a symlink, as written in the layer.
	Link string
	UID  int
	GID  int
}

// FS is the merged file system of an image: clean relative paths ("usr/bin/python3") to nodes.
type FS struct {
	nodes map[string]Node
}

// maxLinks bounds symlink resolution, as the kernel's ELOOP does.
const maxLinks = 40

// ErrNotFound is returned by Resolve when a path, or a directory on the way to it, does not exist.
var ErrNotFound = errors.New("no such file or directory")

// Read indexes the file system of img: go-containerregistry's mutate.Extract flattens the layers (whiteouts,
// opaque directories, a symlink replacing a directory), and each entry of the result becomes a node.
func Read(img v1.Image) (*FS, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	fsys := New()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return fsys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the image's file system: %w", err)
		}
		n := Node{Mode: hdr.Mode & 0o7777, UID: hdr.Uid, GID: hdr.Gid}
		switch hdr.Typeflag {
		case tar.TypeDir:
			n.Kind = Dir
		case tar.TypeSymlink:
			n.Kind, n.Link = Symlink, hdr.Linkname
		case tar.TypeReg, tar.TypeLink:
			n.Kind = File
		default:
			n.Kind = Other
		}
		fsys.nodes[clean(hdr.Name)] = n
	}
}

// New returns an empty file system holding only the root directory.
func New() *FS {
	return &FS{nodes: map[string]Node{".": {Kind: Dir, Mode: 0o755}}}
}

// Add records one node, as if a layer held it; used to describe small file systems in tests and fixtures.
func (f *FS) Add(p string, n Node) {
	f.nodes[clean(p)] = n
}

// Lookup returns the node at p without following symlinks.
func (f *FS) Lookup(p string) (Node, bool) {
	n, ok := f.nodes[clean(p)]
	return n, ok
}

// Paths lists every path in sorted order.
func (f *FS) Paths() []string { return slices.Sorted(maps.Keys(f.nodes)) }

// ResolveParent follows symlinks in every directory leading to p (not in p's last element), as the kernel does
// when a file is created at p, and returns the clean relative path that would be created. Directories that do not
// exist yet are kept as they are.
func (f *FS) ResolveParent(p string) (string, error) {
	p = clean(p)
	if p == "." {
		return p, nil
	}
	dir, base := path.Split(p)
	rdir, err := f.resolve(clean(dir), true, 0)
	if err != nil {
		return "", fmt.Errorf("resolving /%s: %w", p, err)
	}
	return clean(path.Join(rdir, base)), nil
}

// Resolve follows every symlink in p, including the last element, and returns the real path; the last element
// must exist.
func (f *FS) Resolve(p string) (string, Node, error) {
	r, err := f.resolve(clean(p), false, 0)
	if err != nil {
		return "", Node{}, fmt.Errorf("resolving /%s: %w", clean(p), err)
	}
	n, ok := f.nodes[r]
	if !ok {
		return "", Node{}, fmt.Errorf("resolving /%s: /%s: %w", clean(p), r, ErrNotFound)
	}
	return r, n, nil
}

// resolve walks p element by element. With allowMissing, a missing element ends the walk and the rest of the
// path is appended unresolved (it will be created).
func (f *FS) resolve(p string, allowMissing bool, depth int) (string, error) {
	if p == "." {
		return p, nil
	}
	cur := "."
	parts := strings.Split(p, "/")
	for i, part := range parts {
		next := clean(path.Join(cur, part))
		n, ok := f.nodes[next]
		if !ok {
			if allowMissing || i == len(parts)-1 {
				return clean(path.Join(append([]string{next}, parts[i+1:]...)...)), nil
			}
			return "", fmt.Errorf("/%s: %w", next, ErrNotFound)
		}
		if n.Kind == Symlink {
			if depth >= maxLinks {
				return "", fmt.Errorf("/%s: too many levels of symbolic links", next)
			}
			target := n.Link
			if !path.IsAbs(target) {
				target = path.Join(cur, target)
			}
			r, err := f.resolve(clean(target), allowMissing, depth+1)
			if err != nil {
				return "", err
			}
			next = r
		}
		cur = next
	}
	return cur, nil
}

// clean turns any spelling of an in-image path ("/usr/bin/", "./usr//bin") into the index form ("usr/bin"); the
// root is ".". Paths cannot climb above the root.
func clean(p string) string {
	c := path.Clean("/" + p)
	if c == "/" {
		return "."
	}
	return strings.TrimPrefix(c, "/")
}

// Nodes returns a copy of the index, for saving it (see FromNodes).
func (f *FS) Nodes() map[string]Node {
	out := make(map[string]Node, len(f.nodes))
	for k, v := range f.nodes {
		out[k] = v
	}
	return out
}

// FromNodes rebuilds a file system saved with Nodes.
func FromNodes(nodes map[string]Node) *FS {
	f := New()
	for k, v := range nodes {
		f.nodes[clean(k)] = v
	}
	return f
}
