package bundle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// Environment variables of the bundle target (besides REGISTRY, IMAGE_TAG, REGISTRY_INSECURE, SOURCE_DATE_EPOCH
// and PLATFORMS, which mean what they mean for the images target).
const (
	// EnvImages names the file of pinned images (PinsFileForm per line).
	EnvImages = "BUNDLE_IMAGES"
	// EnvRequireDigests, when "true", fails the target when an image is not pinned, even without REGISTRY.
	EnvRequireDigests = "BUNDLE_REQUIRE_DIGESTS"
)

// OptionsFromEnv builds the options of a bundle run in the repository at root from the environment (getenv).
func OptionsFromEnv(ctx context.Context, root string, getenv func(string) string) (Options, error) {
	settings, platforms, err := imagebuild.ReadEnv(ctx, root, getenv, nil)
	if err != nil {
		return Options{}, err
	}
	st, err := stamp.Resolve(ctx, root, "operator")
	if err != nil {
		return Options{}, err
	}
	v, err := versions.Load(root)
	if err != nil {
		return Options{}, err
	}
	opts := Options{
		Sources: SourcesIn(root), OutDir: filepath.Join(root, "_output", "bundle"),
		ImageOutDir: filepath.Join(root, "_output", "bundle-image"), Stamp: st, MTime: settings.MTime,
		DigestsFile: filepath.Join(root, "_output", "images", imagebuild.DigestsFile),
		Platforms:   platforms, Registry: settings.Registry, Tag: settings.Tag, Insecure: settings.Insecure,
		Progress: os.Stdout, K8sVersion: v.Get("KUBE_VERSION"),
	}
	if v := getenv(EnvRequireDigests); v != "" {
		if opts.RequireDigests, err = strconv.ParseBool(v); err != nil {
			return Options{}, fmt.Errorf("%s %q: want true or false", EnvRequireDigests, v)
		}
	}
	if f := getenv(EnvImages); f != "" {
		r, err := os.Open(f)
		if err != nil {
			return Options{}, fmt.Errorf("%s: %w", EnvImages, err)
		}
		defer r.Close()
		if opts.Pins, err = ParsePins(EnvImages+" "+f, r); err != nil {
			return Options{}, err
		}
	}
	return opts, nil
}
