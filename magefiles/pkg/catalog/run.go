package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/operator-framework/operator-registry/alpha/action/migrations"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/lib/config"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// ImageName is the catalog image's repository name and layout directory.
const ImageName = "aws-efs-csi-driver-operator-catalog"

// DefaultMigrateLevel is the migrate level of OpenShift's catalogs since 4.17: bundles carry olm.csv.metadata
// instead of every manifest as an olm.bundle.object.
const DefaultMigrateLevel = "bundle-object-to-csv-metadata"

// ConfigsDir is where the catalog image keeps the file-based catalog.
const ConfigsDir = "/configs"

// Options is everything one catalog run needs.
type Options struct {
	// BundleDir is the rendered bundle; BundleImage its pull spec by digest.
	BundleDir   string
	BundleImage string
	// PackageFile is operator/manifests/package.yaml.
	PackageFile string
	// Dir is the catalog directory; Fresh starts an empty catalog (the default output), otherwise the bundle is
	// added to what Dir holds.
	Dir   string
	Fresh bool
	// MigrateLevel is the operator-registry migration applied to every bundle of the catalog (opm's
	// --migrate-level); empty means DefaultMigrateLevel.
	MigrateLevel string
	// Base is the opm image of the catalog image; empty means no image is built.
	Base        string
	ImageOutDir string
	Stamp       stamp.Stamp
	MTime       time.Time
	Platforms   []platform.Platform
	Registry    string
	Tag         string
	Insecure    bool
	Keychain    authn.Keychain
	Transport   http.RoundTripper
	Progress    io.Writer
}

// Result is what a run produced.
type Result struct {
	// File is the bundle's package file, <Dir>/<package>/catalog.yaml.
	File   string
	Bundle Bundle
	// Image is the catalog image; Built is false when no base was given.
	Image imagebuild.Result
	Built bool
}

// Run adds the bundle to its package in the catalog directory, applies the migrate level across the whole catalog,
// validates it as `opm validate` does and as OLM needs (Resolvable) and, with a base, assembles the
// catalog image (and pushes it with a registry). The directory is written in opm's layout,
// <package>/catalog.yaml, and only after validation passed: a failed run leaves it as it was.
func Run(ctx context.Context, opts Options) (Result, error) {
	out := opts.Progress
	if out == nil {
		out = io.Discard
	}
	pkg, err := ReadPackage(opts.PackageFile)
	if err != nil {
		return Result{}, err
	}
	level := opts.MigrateLevel
	if level == "" {
		level = DefaultMigrateLevel
	}
	migs, err := migrations.NewMigrations(level)
	if err != nil {
		return Result{}, fmt.Errorf("%s %q: %w", EnvMigrateLevel, level, err)
	}
	b, err := RenderBundle(opts.BundleDir, opts.BundleImage)
	if err != nil {
		return Result{}, err
	}
	if b.Package != pkg.Name {
		return Result{}, fmt.Errorf("the bundle is for package %s, %s names %s", b.Package, opts.PackageFile, pkg.Name)
	}
	cfg, files := &declcfg.DeclarativeConfig{}, []string(nil)
	if !opts.Fresh {
		if cfg, files, err = load(ctx, opts.Dir); err != nil {
			return Result{}, err
		}
	}
	current, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		return Result{}, fmt.Errorf("the catalog in %s is not valid: %w", opts.Dir, err)
	}
	if err := AddBundle(cfg, current, pkg, b); err != nil {
		return Result{}, fmt.Errorf("%s: %w", opts.Dir, err)
	}
	if err := migs.Migrate(cfg); err != nil {
		return Result{}, fmt.Errorf("migrating the catalog to %s: %w", level, err)
	}
	if err := write(ctx, *cfg, opts.Dir, files, opts.Fresh); err != nil {
		return Result{}, err
	}
	res := Result{File: filepath.Join(opts.Dir, pkg.Name, "catalog.yaml"), Bundle: b}
	fmt.Fprintf(out, "catalog: %s (%s) added to package %s in %s (migrate level %s)\n", b.Name, opts.BundleImage, pkg.Name, opts.Dir, level)
	if opts.Base == "" {
		fmt.Fprintf(out, "catalog: image not built: no opm base; set CATALOG_BASE=<registry reference or oci:<dir>>, or REGISTRY to build it on OPERATOR_REGISTRY_IMAGE of %s\n", versions.File)
		return res, nil
	}
	res.Image, err = buildImage(ctx, opts)
	res.Built = err == nil
	return res, err
}

// load reads the file-based catalog in dir and lists the files that hold its blobs.
func load(ctx context.Context, dir string) (*declcfg.DeclarativeConfig, []string, error) {
	var metas []*declcfg.Meta
	seen := map[string]bool{}
	var files []string
	err := declcfg.WalkMetasFS(ctx, os.DirFS(dir), func(path string, m *declcfg.Meta, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, path), err)
		}
		metas = append(metas, m)
		if !seen[path] {
			seen[path] = true
			files = append(files, path)
		}
		return nil
	}, declcfg.WithConcurrency(1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the catalog in %s: %w", dir, err)
	}
	cfg, err := declcfg.LoadSlice(metas)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the catalog in %s: %w", dir, err)
	}
	return cfg, files, nil
}

// write writes cfg in opm's layout into a staging directory beside dir, validates it with opm's validation, and
// then replaces the catalog files of dir (old, the files that held blobs) with it. Other files in dir stay, unless
// fresh, which empties dir.
func write(ctx context.Context, cfg declcfg.DeclarativeConfig, dir string, old []string, fresh bool) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), ".catalog-stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := declcfg.WriteFS(cfg, stage, declcfg.WriteYAML, ".yaml"); err != nil {
		return err
	}
	if err := config.Validate(ctx, os.DirFS(stage)); err != nil {
		return fmt.Errorf("the catalog is not valid: %w", err)
	}
	if err := Resolvable(cfg); err != nil {
		return fmt.Errorf("OLM could not use the catalog: %w", err)
	}
	if fresh {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	for _, f := range old {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(stage, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.Rename(p, to)
	})
}

// ImageSpec is the catalog image: the opm base, the catalog directory under /configs, and opm serve as command.
func ImageSpec(dir, base string) (imagebuild.Spec, error) {
	files, err := bundle.TreeEntries(dir, ".")
	if err != nil {
		return imagebuild.Spec{}, err
	}
	for i := range files {
		files[i].Path = filepath.ToSlash(filepath.Join(ConfigsDir, files[i].Path))
	}
	return imagebuild.Spec{
		Name: ImageName, From: base, FromEnv: "CATALOG_BASE", Module: "operator",
		Layers: []imagebuild.LayerSpec{{Name: "catalog", Kind: imagebuild.Files, Files: files}},
		Config: imagebuild.Config{
			DisplayName: "AWS EFS CSI Driver Operator catalog",
			Description: "A file-based OLM catalog with the AWS EFS CSI Driver Operator, for a custom CatalogSource.",
			Tags:        "aws,efs,csi,storage,operator,olm,catalog",
			Entrypoint:  []string{"/bin/opm"},
			Cmd:         []string{"serve", ConfigsDir, "--cache-dir=/tmp/cache"},
			Labels:      map[string]string{"operators.operatorframework.io.index.configs.v1": ConfigsDir},
		},
	}, nil
}

func buildImage(ctx context.Context, opts Options) (imagebuild.Result, error) {
	spec, err := ImageSpec(opts.Dir, opts.Base)
	if err != nil {
		return imagebuild.Result{}, err
	}
	return imagebuild.RunOne(ctx, imagebuild.Options{
		OutDir: opts.ImageOutDir, Platforms: opts.Platforms,
		Stamps: map[string]stamp.Stamp{"operator": opts.Stamp}, MTime: opts.MTime,
		Registry: opts.Registry, Tag: opts.Tag, Insecure: opts.Insecure, Keychain: opts.Keychain, Transport: opts.Transport,
		Jobs: 2, Progress: opts.Progress,
	}, spec)
}
