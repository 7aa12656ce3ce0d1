package catalog

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/openshift/aws-efs-csi/magefiles/internal/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/internal/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/internal/platform"
	"github.com/openshift/aws-efs-csi/magefiles/internal/stamp"
)

// ImageName is the catalog image's repository name and layout directory.
const ImageName = "aws-efs-csi-driver-operator-catalog"

// DefaultBase is the opm image the catalog image is built on when REGISTRY is set and CATALOG_BASE is not.
const DefaultBase = "registry.redhat.io/openshift4/ose-operator-registry-rhel9:v4.22"

// ConfigsDir is where the catalog image keeps the file-based catalog.
const ConfigsDir = "/configs"

// Options is everything one catalog run needs.
type Options struct {
	// BundleDir is the rendered bundle; BundleImage its pull spec by digest.
	BundleDir   string
	BundleImage string
	// PackageFile is operator/manifests/package.yaml.
	PackageFile string
	// Dir is the catalog directory; Fresh empties it first (the default output), otherwise the bundle is added to
	// what it holds.
	Dir   string
	Fresh bool
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
	File   string
	Bundle Bundle
	// Image is the catalog image; Built is false when no base was given.
	Image imagebuild.Result
	Built bool
}

// Run adds the bundle to the catalog directory, checks the package's upgrade graph and, with a base, assembles
// the catalog image (and pushes it with a registry).
func Run(ctx context.Context, opts Options) (Result, error) {
	out := opts.Progress
	if out == nil {
		out = io.Discard
	}
	pkg, err := ReadPackage(opts.PackageFile)
	if err != nil {
		return Result{}, err
	}
	b, err := ReadBundle(opts.BundleDir, opts.BundleImage)
	if err != nil {
		return Result{}, err
	}
	if opts.Fresh {
		if err := os.RemoveAll(opts.Dir); err != nil {
			return Result{}, err
		}
	}
	f, err := findPackageFile(opts.Dir, pkg.Name)
	if err != nil {
		return Result{}, err
	}
	if err := AddBundle(&f, pkg, b); err != nil {
		return Result{}, err
	}
	if err := Check(f.Blobs, pkg.Name); err != nil {
		return Result{}, fmt.Errorf("%s: %w", f.Path, err)
	}
	if err := f.Write(); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "catalog: %s (%s) added to %s\n", b.Name, opts.BundleImage, f.Path)
	res := Result{File: f.Path, Bundle: b}
	if opts.Base == "" {
		fmt.Fprintf(out, "catalog: image not built: no opm base; set CATALOG_BASE=<registry reference or oci:<dir>> (e.g. %s) or REGISTRY to build it\n", DefaultBase)
		return res, nil
	}
	res.Image, err = buildImage(ctx, opts)
	res.Built = err == nil
	return res, err
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
