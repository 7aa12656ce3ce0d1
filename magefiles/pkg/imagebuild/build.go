package imagebuild

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/progress"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheels"
)

// Options is everything one run needs.
type Options struct {
	// OutDir receives one OCI layout per image, digests.json and the caches (_output/images).
	OutDir string
	// BinDir holds the binaries of `mage build` (_output/bin/<os>_<arch>/).
	BinDir string
	// EFSUtilsDir is the efs-utils source directory holding layout.json.
	EFSUtilsDir string
	// Wheels are the pure-Python wheel files Wheels layers install (wheels.Env.Build); Pip installs them.
	Wheels    []string
	Pip       wheels.Pip
	Specs     []Spec
	Platforms []platform.Platform
	// Stamps holds the provenance of each module, keyed by Spec.Module.
	Stamps map[string]stamp.Stamp
	// Release is the "release" label; empty means the commit's first 12 characters (+ ".dirty").
	Release string
	// MTime is every file's modification time and every config's creation time.
	MTime time.Time
	// Registry is where images are pushed ("host[:port][/namespace]"); empty means no push.
	Registry string
	// Tag is the tag pushed and written into the layouts; empty means each image's module version.
	Tag string
	// Insecure allows plain HTTP to registries that are not on loopback.
	Insecure bool
	// Keychain finds registry credentials; nil means authn.DefaultKeychain (the docker config).
	Keychain authn.Keychain
	// Transport is the HTTP transport for registries; nil means go-containerregistry's default.
	Transport http.RoundTripper
	// Python finds the interpreter that byte-compiles efs-utils for a base with Python 3.<minor>; nil means
	// pycompile.Interpreter (python3.<minor> on PATH).
	Python func(minor int) (string, error)
	// Jobs bounds the platform images assembled, and the blobs uploaded, at once.
	Jobs int
	// Progress receives one line per layer, image and push.
	Progress io.Writer
}

func (o Options) release(st stamp.Stamp) string {
	if o.Release != "" {
		return o.Release
	}
	r := st.Commit
	if len(r) > 12 {
		r = r[:12]
	}
	if st.Dirty {
		r += ".dirty"
	}
	return r
}

func (o Options) tag(spec Spec) string {
	if o.Tag != "" {
		return o.Tag
	}
	return o.Stamps[spec.Module].Version
}

// Result is what happened to one image.
type Result struct {
	Name string
	Tag  string
	// Digest is the image index digest; Platforms maps os/arch to the image manifest digest.
	Digest    v1.Hash
	Platforms map[string]v1.Hash
	// Layout is the OCI layout directory; Changed is false when it already held this index.
	Layout  string
	Changed bool
	// Reference is the pushed name@digest ("" without a registry); Pushed is false when the registry already
	// had it; PushedBytes counts the bytes uploaded for it.
	Reference   string
	Pushed      bool
	PushedBytes int64
}

// RunOne assembles a single image, spec, with the rest of opts (opts.Specs is ignored): the bundle and catalog
// images are built this way, on their own, after the release images.
func RunOne(ctx context.Context, opts Options, spec Spec) (Result, error) {
	opts.Specs = []Spec{spec}
	results, err := Run(ctx, opts)
	if err != nil {
		return Result{}, err
	}
	return results[0], nil
}

// Run assembles every spec in order (an image may use one before it as its base), writes the layouts and
// digests.json, and pushes when a registry is given. Platforms of one image are assembled in parallel.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	if opts.MTime.IsZero() {
		return nil, fmt.Errorf("no build time: set SOURCE_DATE_EPOCH or build from a git commit")
	}
	a := &assembler{
		opts:  opts,
		cache: layer.NewCache(layer.Options{MTime: opts.MTime, CacheDir: opts.OutDir + "/.cache/layers"}),
		memos: map[string]func() ([]layer.Entry, error){},
	}
	reg := registryOptions{insecure: opts.Insecure, keychain: opts.Keychain, transport: opts.Transport, jobs: opts.Jobs, sent: &atomic.Int64{}}
	report := progress.New(opts.Progress)
	built := map[string]v1.ImageIndex{}
	var results []Result
	for _, spec := range opts.Specs {
		idx, res, err := a.image(ctx, spec, built, reg, report)
		if err != nil {
			return nil, err
		}
		built[spec.Name] = idx
		if opts.Registry != "" {
			if err := push(ctx, &res, idx, opts.Registry, reg, report); err != nil {
				return nil, err
			}
		}
		results = append(results, res)
	}
	if err := writeDigests(opts.OutDir, results); err != nil {
		return nil, err
	}
	return results, nil
}

// image assembles every platform of spec, then the index and the layout.
func (a *assembler) image(ctx context.Context, spec Spec, built map[string]v1.ImageIndex, reg registryOptions, report *progress.Lines) (v1.ImageIndex, Result, error) {
	start := time.Now()
	b, err := resolveBase(ctx, spec, built, reg)
	if err != nil {
		return nil, Result{}, err
	}
	// Pick every platform's base first, so that a base lacking platforms is reported whole and the same way
	// every time.
	baseImages := make([]v1.Image, len(a.opts.Platforms))
	var missing []string
	for i, p := range a.opts.Platforms {
		if baseImages[i], err = b.Image(ctx, p); err != nil {
			missing = append(missing, fmt.Sprintf("%s: %v", p, err))
		}
	}
	if len(missing) > 0 {
		return nil, Result{}, fmt.Errorf("%s: base (%s=%s):\n  - %s", spec.Name, spec.FromEnv, spec.From, strings.Join(missing, "\n  - "))
	}
	images := make([]v1.Image, len(a.opts.Platforms))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(a.opts.Jobs, 1))
	var mu sync.Mutex
	for i, p := range a.opts.Platforms {
		g.Go(func() error {
			img, reports, err := a.platformImage(gctx, spec, baseImages[i], p)
			if err != nil {
				return err
			}
			images[i] = img
			mu.Lock()
			defer mu.Unlock()
			for _, r := range reports {
				state := "reused from cache"
				if r.built {
					state = "built"
				}
				report.Printf("images: %s %s: layer %s %s (%s, %s)", spec.Name, p, r.name, state, short(r.digest), humanBytes(r.size))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, Result{}, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	res := Result{Name: spec.Name, Tag: a.opts.tag(spec), Platforms: map[string]v1.Hash{}}
	for i, img := range images {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, Result{}, err
		}
		d, err := img.Digest()
		if err != nil {
			return nil, Result{}, err
		}
		res.Platforms[a.opts.Platforms[i].String()] = d
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	}
	if res.Digest, err = idx.Digest(); err != nil {
		return nil, Result{}, err
	}
	written, changed, err := writeLayout(a.opts.OutDir, spec.Name, res.Tag, idx)
	if err != nil {
		return nil, Result{}, err
	}
	res.Layout, res.Changed = written.dir, changed
	state := "unchanged"
	if changed {
		state = "written"
	}
	report.Printf("images: %s: index %s with %d platforms %s to %s in %s", spec.Name, short(res.Digest), len(images), state, res.Layout, time.Since(start).Round(100*time.Millisecond))
	return written.index, res, nil
}

func short(h v1.Hash) string {
	if len(h.Hex) < 12 {
		return h.String()
	}
	return h.Algorithm + ":" + h.Hex[:12]
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
