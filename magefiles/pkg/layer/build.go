package layer

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// formatVersion changes whenever the bytes Build writes for the same entries change, so cached layers written by
// an older format are not reused.
const formatVersion = "layer/v1"

// Options controls how a layer is written.
type Options struct {
	// MTime is the modification time of every entry (SOURCE_DATE_EPOCH or the commit time).
	MTime time.Time
	// CacheDir holds built layers by content key; a layer whose key exists there is not written again.
	CacheDir string
}

// Result is a built layer.
type Result struct {
	Layer v1.Layer
	// Built is false when the layer came from the cache.
	Built bool
	// Entries are the validated entries in the order written.
	Entries []Entry
}

// Cache builds layers into one cache directory; concurrent builds of the same content wait for each other, so a
// layer shared by several platforms is written once.
type Cache struct {
	opts  Options
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// NewCache returns a cache writing with opts.
func NewCache(opts Options) *Cache {
	return &Cache{opts: opts, locks: map[string]*sync.Mutex{}}
}

func (c *Cache) lock(key string) func() {
	c.mu.Lock()
	l, ok := c.locks[key]
	if !ok {
		l = &sync.Mutex{}
		c.locks[key] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Build writes the entries as a gzip tar into the cache (unless a layer with the same key is there) and returns
// it. Entries are sorted by path, every entry is owned by 0:0 with the cache's MTime, files are read whole from
// Data or Source, and gzip runs at a fixed level with an empty header, so the same entries give the same digest.
func (c *Cache) Build(entries []Entry) (Result, error) {
	opts := c.opts
	sorted, err := validate(entries)
	if err != nil {
		return Result{}, err
	}
	key, err := cacheKey(sorted, opts.MTime)
	if err != nil {
		return Result{}, err
	}
	defer c.lock(key)()
	base := filepath.Join(opts.CacheDir, key)
	if l, err := open(base); err == nil {
		return Result{Layer: l, Entries: sorted}, nil
	}
	if err := os.MkdirAll(opts.CacheDir, 0o755); err != nil {
		return Result{}, err
	}
	if err := write(base, sorted, opts.MTime); err != nil {
		return Result{}, err
	}
	l, err := open(base)
	if err != nil {
		return Result{}, err
	}
	return Result{Layer: l, Built: true, Entries: sorted}, nil
}

// cacheKey hashes everything that goes into the tar: paths, kinds, modes, links, contents and the time.
func cacheKey(entries []Entry, mtime time.Time) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%d\n", formatVersion, mtime.Unix())
	for _, e := range entries {
		fmt.Fprintf(h, "%q %d %o %q ", e.Path, e.Kind, e.Mode, e.Link)
		if e.Kind == File {
			if err := hashContent(h, e); err != nil {
				return "", err
			}
		}
		fmt.Fprintln(h)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashContent(h hash.Hash, e Entry) error {
	if e.Source == "" {
		c := sha256.Sum256(e.Data)
		_, err := h.Write(c[:])
		return err
	}
	f, err := os.Open(e.Source)
	if err != nil {
		return fmt.Errorf("layer entry /%s: %w", e.Path, err)
	}
	defer f.Close()
	c := sha256.New()
	if _, err := io.Copy(c, f); err != nil {
		return fmt.Errorf("layer entry /%s: reading %s: %w", e.Path, e.Source, err)
	}
	_, err = h.Write(c.Sum(nil))
	return err
}

// sidecar records the digests of a cached layer so a warm build does not hash it again.
type sidecar struct {
	Digest string `json:"digest"`
	DiffID string `json:"diffID"`
	Size   int64  `json:"size"`
}

// write streams the tar through gzip into base+".tar.gz" and records the digests in base+".json"; both are
// written to temporary names and renamed, so an interrupted build leaves no half layer in the cache.
func write(base string, entries []Entry, mtime time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(base), ".layer-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	compressed := sha256.New()
	counter := &countingWriter{w: io.MultiWriter(tmp, compressed)}
	zw, err := gzip.NewWriterLevel(counter, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	uncompressed := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, uncompressed))
	for _, e := range entries {
		if err := writeEntry(tw, e, mtime); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	meta, err := json.Marshal(sidecar{
		Digest: "sha256:" + hex.EncodeToString(compressed.Sum(nil)),
		DiffID: "sha256:" + hex.EncodeToString(uncompressed.Sum(nil)),
		Size:   counter.n,
	})
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), base+".tar.gz"); err != nil {
		return err
	}
	return os.WriteFile(base+".json", meta, 0o644)
}

func writeEntry(tw *tar.Writer, e Entry, mtime time.Time) error {
	hdr := &tar.Header{Name: e.Path, Mode: e.Mode, ModTime: mtime.UTC().Truncate(time.Second), Format: tar.FormatPAX}
	var content io.Reader
	switch e.Kind {
	case Dir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, e.Path+"/"
	case Symlink:
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, e.Link, 0o777
	case Whiteout:
		dir, name := path.Split(e.Path)
		hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeReg, dir+".wh."+name, 0o644
	case File:
		hdr.Typeflag = tar.TypeReg
		if e.Source == "" {
			hdr.Size, content = int64(len(e.Data)), bytes.NewReader(e.Data)
		} else {
			f, err := os.Open(e.Source)
			if err != nil {
				return fmt.Errorf("layer entry /%s: %w", e.Path, err)
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				return err
			}
			hdr.Size, content = info.Size(), f
		}
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("layer entry /%s: %w", e.Path, err)
	}
	if content != nil {
		if n, err := io.Copy(tw, content); err != nil || n != hdr.Size {
			return fmt.Errorf("layer entry /%s: wrote %d of %d bytes (did %s change during the build?): %v", e.Path, n, hdr.Size, e.Source, err)
		}
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// open returns the cached layer at base, trusting the sidecar's digests; it fails when either file is missing.
func open(base string) (v1.Layer, error) {
	data, err := os.ReadFile(base + ".json")
	if err != nil {
		return nil, err
	}
	var meta sidecar
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("%s.json: %w", base, err)
	}
	info, err := os.Stat(base + ".tar.gz")
	if err != nil {
		return nil, err
	}
	if info.Size() != meta.Size {
		return nil, fmt.Errorf("%s.tar.gz: size %d, recorded %d", base, info.Size(), meta.Size)
	}
	digest, err := v1.NewHash(meta.Digest)
	if err != nil {
		return nil, err
	}
	diffID, err := v1.NewHash(meta.DiffID)
	if err != nil {
		return nil, err
	}
	return &cachedLayer{file: base + ".tar.gz", digest: digest, diffID: diffID, size: meta.Size}, nil
}

// cachedLayer is a gzip tar on disk whose digests are known.
type cachedLayer struct {
	file   string
	digest v1.Hash
	diffID v1.Hash
	size   int64
}

var _ v1.Layer = (*cachedLayer)(nil)

func (l *cachedLayer) Digest() (v1.Hash, error)             { return l.digest, nil }
func (l *cachedLayer) DiffID() (v1.Hash, error)             { return l.diffID, nil }
func (l *cachedLayer) Size() (int64, error)                 { return l.size, nil }
func (l *cachedLayer) MediaType() (types.MediaType, error)  { return types.OCILayer, nil }
func (l *cachedLayer) Compressed() (io.ReadCloser, error)   { return os.Open(l.file) }
func (l *cachedLayer) Uncompressed() (io.ReadCloser, error) { return gunzip(l.file) }
