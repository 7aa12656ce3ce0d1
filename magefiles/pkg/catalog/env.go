package catalog

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/operator-framework/operator-registry/alpha/action/migrations"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// Environment variables of the catalog target (besides REGISTRY, IMAGE_TAG, REGISTRY_INSECURE,
// SOURCE_DATE_EPOCH and PLATFORMS).
const (
	// EnvDir names an existing catalog directory to add the bundle to.
	EnvDir = "CATALOG_DIR"
	// EnvBase is the opm base image.
	EnvBase = "CATALOG_BASE"
	// EnvBundleImage overrides the bundle's pull spec (by digest), e.g. the image Konflux built.
	EnvBundleImage = "CATALOG_BUNDLE_IMAGE"
	// EnvMigrateLevel is opm's --migrate-level for the whole catalog (DefaultMigrateLevel when unset; "none" keeps
	// olm.bundle.object properties).
	EnvMigrateLevel = "CATALOG_MIGRATE_LEVEL"
)

// DevelopmentBundleRepository names the bundle in a catalog whose bundle image was not pushed.
const DevelopmentBundleRepository = "quay.io/openshift/origin-" + bundle.ImageName

// OptionsFromEnv builds the options of a catalog run in the repository at root, after `mage bundle`.
func OptionsFromEnv(ctx context.Context, root string, getenv func(string) string, progress io.Writer) (Options, error) {
	settings, platforms, err := imagebuild.ReadEnv(ctx, root, getenv, nil)
	if err != nil {
		return Options{}, err
	}
	st, err := stamp.Resolve(ctx, root, "operator")
	if err != nil {
		return Options{}, err
	}
	opts := Options{
		BundleDir: filepath.Join(root, "_output", "bundle"), PackageFile: filepath.Join(root, "operator", "manifests", bundle.PackageFile),
		Dir: filepath.Join(root, "_output", "catalog"), Fresh: true, ImageOutDir: filepath.Join(root, "_output", "catalog-image"),
		Stamp: st, MTime: settings.MTime, Platforms: platforms,
		Registry: settings.Registry, Tag: settings.Tag, Insecure: settings.Insecure, Progress: progress,
	}
	if d := getenv(EnvDir); d != "" {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			return Options{}, fmt.Errorf("%s %q: want an existing catalog directory", EnvDir, d)
		}
		opts.Dir, opts.Fresh = d, false
	}
	opts.MigrateLevel = getenv(EnvMigrateLevel)
	if opts.MigrateLevel != "" {
		if _, err := migrations.NewMigrations(opts.MigrateLevel); err != nil {
			return Options{}, fmt.Errorf("%s %q: %w: want none or %s", EnvMigrateLevel, opts.MigrateLevel, err, DefaultMigrateLevel)
		}
	}
	opts.Base = getenv(EnvBase)
	if opts.Base == "" && opts.Registry != "" {
		v, err := versions.Load(root)
		if err != nil {
			return Options{}, err
		}
		opts.Base = v.Get("OPERATOR_REGISTRY_IMAGE")
	}
	opts.BundleImage, err = bundleImage(getenv(EnvBundleImage), filepath.Join(root, "_output", "bundle-image", imagebuild.DigestsFile), progress)
	return opts, err
}

// bundleImage is the given pull spec (which must name a digest), else the pushed bundle of digests.json, else the
// built bundle's digest in the development repository, with a warning.
func bundleImage(given, digestsFile string, progress io.Writer) (string, error) {
	if given != "" {
		d, err := name.NewDigest(given)
		if err != nil {
			return "", fmt.Errorf("%s %q: want <repository>@sha256:<digest>: %w", EnvBundleImage, given, err)
		}
		return d.String(), nil
	}
	digests, err := bundle.ReadDigests(digestsFile)
	if err != nil {
		return "", err
	}
	for _, d := range digests {
		if d.Name != bundle.ImageName {
			continue
		}
		if d.Reference != "" {
			return d.Reference, nil
		}
		ref := DevelopmentBundleRepository + "@" + d.Digest
		fmt.Fprintf(progress, "catalog: WARNING: the bundle image was not pushed (REGISTRY unset); the catalog names it %s, which no registry holds: set REGISTRY, or %s\n", ref, EnvBundleImage)
		return ref, nil
	}
	return "", fmt.Errorf("no bundle image in %s: run `go tool mage bundle` first or set %s", digestsFile, EnvBundleImage)
}
