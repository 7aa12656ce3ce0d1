package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/efslayout"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/pycompile"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/rootfs"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheels"
)

// MinPythonMinor is the oldest Python 3 minor version efs-utils supports (RHEL 9's 3.9).
const MinPythonMinor = 9

// assembler builds per-platform images; it is shared by all images and platforms of one run.
type assembler struct {
	opts  Options
	cache *layer.Cache

	mu    sync.Mutex
	memos map[string]func() ([]layer.Entry, error)
}

// once computes the entries of key at most once in a run, however many platforms and images ask for them: the
// efs-utils files, the bytecode of one Python version, the wheels of one site-packages.
func (a *assembler) once(key string, compute func() ([]layer.Entry, error)) ([]layer.Entry, error) {
	a.mu.Lock()
	f, ok := a.memos[key]
	if !ok {
		f = sync.OnceValues(compute)
		a.memos[key] = f
	}
	a.mu.Unlock()
	return f()
}

// layerReport says what happened to one layer of one platform image.
type layerReport struct {
	name   string
	digest v1.Hash
	size   int64
	built  bool
}

// platformImage assembles spec for one platform on base.
func (a *assembler) platformImage(ctx context.Context, spec Spec, base v1.Image, p platform.Platform) (v1.Image, []layerReport, error) {
	where := fmt.Sprintf("%s %s", spec.Name, p)
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the base config: %w", where, err)
	}
	if cf.OS != p.OS || cf.Architecture != p.Arch {
		return nil, nil, fmt.Errorf("%s: the base %s gave a %s/%s image", where, spec.From, cf.OS, cf.Architecture)
	}
	if base, err = ociBase(base); err != nil {
		return nil, nil, fmt.Errorf("%s: converting the base to OCI media types: %w", where, err)
	}
	fsys, err := a.rootfs(base)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the base file system: %w", where, err)
	}
	if spec.CheckEFSUtilsRuntime {
		if missing := fsys.Missing(MinPythonMinor, rootfs.EFSUtilsPrograms()); len(missing) > 0 {
			return nil, nil, fmt.Errorf("%s: the base %s (%s) lacks what efs-utils needs at run time:\n  - %s\nuse a runtime base with these RPMs installed (see docs/images.md)",
				where, spec.From, spec.FromEnv, strings.Join(missing, "\n  - "))
		}
	}
	img := base
	var reports []layerReport
	for _, ls := range spec.Layers {
		entries, err := a.entries(ctx, ls, fsys, p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: layer %s: %w", where, ls.Name, err)
		}
		placed, err := layer.Place(entries, fsys)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: layer %s: %w", where, ls.Name, err)
		}
		res, err := a.cache.Build(placed)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: layer %s: %w", where, ls.Name, err)
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     res.Layer,
			MediaType: types.OCILayer,
			History:   v1.History{Created: v1.Time{Time: a.opts.MTime}, CreatedBy: "mage images: " + ls.Name, Comment: spec.Name},
		})
		if err != nil {
			return nil, nil, err
		}
		d, _ := res.Layer.Digest()
		size, _ := res.Layer.Size()
		reports = append(reports, layerReport{name: ls.Name, digest: d, size: size, built: res.Built})
	}
	img, err = a.configure(img, spec, p)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	return img, reports, nil
}

// entries lists the files of one layer for one platform, before placement on the base.
func (a *assembler) entries(ctx context.Context, ls LayerSpec, fsys *rootfs.FS, p platform.Platform) ([]layer.Entry, error) {
	switch ls.Kind {
	case EFSUtils:
		es, err := a.efsUtils()
		if err != nil {
			return nil, err
		}
		py, err := fsys.FindPython()
		if err != nil {
			return nil, err
		}
		pyc, err := a.pyc(ctx, py, es)
		if err != nil {
			return nil, err
		}
		return append(append([]layer.Entry(nil), es...), pyc...), nil
	case Wheels:
		py, err := fsys.FindPython()
		if err != nil {
			return nil, err
		}
		return a.wheelEntries(ctx, py)
	case Binary:
		src := filepath.Join(a.opts.BinDir, p.Dir(), ls.Program)
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("%w (run `go tool mage build` first)", err)
		}
		return []layer.Entry{{Path: ls.Dest, Kind: layer.File, Mode: 0o755, Source: src}}, nil
	case StaticFiles:
		return a.staticFiles(ls.Dest)
	case Files:
		if len(ls.Files) == 0 {
			return nil, fmt.Errorf("a Files layer with no entries")
		}
		return ls.Files, nil
	}
	return nil, fmt.Errorf("unknown layer kind %d", ls.Kind)
}

func (a *assembler) efsUtils() ([]layer.Entry, error) {
	return a.once("efs-utils", func() ([]layer.Entry, error) {
		l, err := efslayout.Read(filepath.Join(a.opts.EFSUtilsDir, "layout.json"))
		if err != nil {
			return nil, err
		}
		return l.Entries(a.opts.EFSUtilsDir)
	})
}

// efsConfigDir is where efs-utils keeps its configuration and CA bundle.
const efsConfigDir = "etc/amazon/efs"

// staticFiles moves the efs-utils files of /etc/amazon/efs to dest: a whiteout of the old directory and the
// same files, with the same modes, under dest.
func (a *assembler) staticFiles(dest string) ([]layer.Entry, error) {
	efs, err := a.efsUtils()
	if err != nil {
		return nil, err
	}
	out := []layer.Entry{{Path: efsConfigDir, Kind: layer.Whiteout}}
	for _, e := range efs {
		rel, ok := strings.CutPrefix(layer.Clean(e.Path), efsConfigDir+"/")
		if ok {
			e.Path = path.Join(dest, rel)
			out = append(out, e)
		}
	}
	if len(out) == 1 {
		return nil, fmt.Errorf("efs-utils/layout.json installs nothing under /%s", efsConfigDir)
	}
	return out, nil
}

// bytecode compiles the efs-utils modules once per Python minor version, with an interpreter of that version.
func (a *assembler) pyc(ctx context.Context, py rootfs.Python, efs []layer.Entry) ([]layer.Entry, error) {
	return a.once(fmt.Sprintf("bytecode 3.%d", py.Minor), func() ([]layer.Entry, error) {
		find := a.opts.Python
		if find == nil {
			find = pycompile.Interpreter
		}
		python, err := find(py.Minor)
		if err != nil {
			return nil, err
		}
		return pycompile.Bytecode(ctx, python, efs)
	})
}

// wheelEntries installs the wheels with pip into a site-packages directory for py's version, once per version
// in a run, and lists that tree below py's site-packages in the image.
func (a *assembler) wheelEntries(ctx context.Context, py rootfs.Python) ([]layer.Entry, error) {
	return a.once("wheels "+py.SitePackages(), func() ([]layer.Entry, error) {
		if len(a.opts.Wheels) == 0 {
			return nil, fmt.Errorf("no wheels were given (run `go tool mage wheels`)")
		}
		dir := filepath.Join(a.opts.OutDir, ".cache", "site-packages", "python"+py.String())
		if err := wheels.Install(ctx, a.opts.Pip, a.opts.Wheels, py.Minor, dir); err != nil {
			return nil, err
		}
		return layer.Tree(dir, py.SitePackages())
	})
}

// rootfs reads the base's file system, from the cache when this base digest was read before.
func (a *assembler) rootfs(base v1.Image) (*rootfs.FS, error) {
	digest, err := base.Digest()
	if err != nil {
		return nil, err
	}
	cacheFile := filepath.Join(a.opts.OutDir, ".cache", "rootfs", digest.Hex+".json")
	if data, err := os.ReadFile(cacheFile); err == nil {
		var nodes map[string]rootfs.Node
		if json.Unmarshal(data, &nodes) == nil {
			return rootfs.FromNodes(nodes), nil
		}
	}
	fsys, err := rootfs.Read(base)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(fsys.Nodes())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(cacheFile), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(cacheFile), ".rootfs-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return fsys, os.Rename(tmp.Name(), cacheFile)
}
