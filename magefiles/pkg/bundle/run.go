package bundle

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// ImageName is the bundle image's repository name and its layout directory.
const ImageName = "aws-efs-csi-driver-operator-bundle"

// Options is everything one bundle run needs.
type Options struct {
	Sources Sources
	// OutDir receives manifests/ and metadata/ (_output/bundle); it is replaced only by a bundle that validated.
	OutDir string
	// ImageOutDir receives the bundle image's OCI layout and digests.json (_output/bundle-image).
	ImageOutDir string
	// Stamp is the operator module's provenance; its version is the bundle's.
	Stamp stamp.Stamp
	// MTime dates the image's files and config.
	MTime time.Time
	// Pins are the images given with BUNDLE_IMAGES; DigestsFile is _output/images/digests.json.
	Pins        map[string]string
	DigestsFile string
	// RequireDigests fails the run when an image is not pinned by digest.
	RequireDigests bool
	// K8sVersion is the Kubernetes of the newest OpenShift the bundle targets (KUBE_VERSION of
	// images/versions.conf): the deprecated-API validator fails on APIs removed up to it.
	K8sVersion string
	// Platforms of the bundle image's index.
	Platforms []platform.Platform
	// Registry, Tag, Insecure, Keychain and Transport are as for imagebuild.Options.
	Registry  string
	Tag       string
	Insecure  bool
	Keychain  authn.Keychain
	Transport http.RoundTripper
	Progress  io.Writer
}

// Result is what a run produced.
type Result struct {
	Dir    string
	CSV    string
	Images []Resolved
	Report Report
	Image  imagebuild.Result
}

// Run pins the images, renders and validates the bundle, moves it to OutDir and assembles (and, with a registry,
// pushes) the bundle image.
func Run(ctx context.Context, opts Options) (Result, error) {
	out := opts.Progress
	if out == nil {
		out = io.Discard
	}
	if opts.K8sVersion == "" {
		return Result{}, fmt.Errorf("bundle: no Kubernetes version to validate against: want Options.K8sVersion, KUBE_VERSION of %s", versions.File)
	}
	resolved, err := ResolveSources(opts.Sources, opts.Pins, opts.DigestsFile)
	if err != nil {
		return Result{}, err
	}
	require := opts.RequireDigests || opts.Registry != ""
	if err := reportPins(out, resolved, require); err != nil {
		return Result{}, err
	}
	res := Result{Dir: opts.OutDir, Images: resolved}
	version := strings.TrimPrefix(opts.Stamp.Version, "v")
	res.CSV = "aws-efs-csi-driver-operator.v" + version
	if res.Report, err = renderValidated(opts, Values{Version: version, Images: resolved}, require); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "bundle: %s written to %s/{manifests,metadata}\n", res.CSV, opts.OutDir)
	res.Image, err = buildImage(ctx, opts)
	return res, err
}

// ResolveSources reads images.yaml, the CSV's references and the mirror set of src, and resolves every image
// (Resolve) with the pins and the digests file of `mage images` (a missing file gives no digests).
func ResolveSources(src Sources, pins map[string]string, digestsFile string) ([]Resolved, error) {
	images, err := ReadImages(filepath.Join(src.Manifests, ImagesFile))
	if err != nil {
		return nil, err
	}
	source, err := CSVImages(filepath.Join(src.Manifests, CSVFile))
	if err != nil {
		return nil, err
	}
	mirrors, err := ReadMirrorSet(src.MirrorSet)
	if err != nil {
		return nil, err
	}
	var digests []imagebuild.Digest
	if digestsFile != "" {
		if digests, err = ReadDigests(digestsFile); err != nil {
			return nil, err
		}
	}
	return Resolve(images, source, mirrors, pins, digests)
}

// reportPins prints where each image comes from; placeholder digests fail when digests are required.
func reportPins(out io.Writer, resolved []Resolved, require bool) error {
	for _, r := range resolved {
		if r.Unrecorded == "" {
			fmt.Fprintf(out, "bundle: %s=%s (from %s)\n", r.Placeholder, r.Ref, r.From)
		}
	}
	missing := Unrecorded(resolved)
	if len(missing) == 0 {
		return nil
	}
	var lines []string
	for _, r := range missing {
		lines = append(lines, fmt.Sprintf("%s=%s (%s)", r.Placeholder, r.Ref, r.Unrecorded))
	}
	how := "record them in " + CSVFile + " and " + ImageReferencesFile + " (docs/release.md#image-digests), or for a local bundle list them in a file named by BUNDLE_IMAGES (" + PinsFileForm + " per line) and run `REGISTRY=<registry> go tool mage images` for the images this repository builds"
	if require {
		return fmt.Errorf("bundle: %d images have a placeholder digest, and REGISTRY or BUNDLE_REQUIRE_DIGESTS=true requires every digest to be real:\n  - %s\n%s",
			len(missing), strings.Join(lines, "\n  - "), how)
	}
	fmt.Fprintf(out, "bundle: WARNING: %d images have a placeholder digest; this bundle is for development only, not for release:\n  - %s\nbundle: to pin them, %s\n",
		len(missing), strings.Join(lines, "\n  - "), how)
	return nil
}

// renderValidated renders into a fresh directory beside OutDir, validates it, and only then replaces OutDir.
func renderValidated(opts Options, v Values, require bool) (Report, error) {
	parent := filepath.Dir(opts.OutDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Report{}, err
	}
	stage, err := os.MkdirTemp(parent, "bundle-stage-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(stage)
	if err := Render(opts.Sources, stage, v); err != nil {
		return Report{}, err
	}
	report, err := Validate(stage, ValidateOptions{RequireDigests: require, K8sVersion: opts.K8sVersion})
	if err != nil {
		return report, err
	}
	for _, w := range report.Warnings {
		fmt.Fprintf(progress(opts.Progress), "bundle: validator warning: %s\n", w)
	}
	if err := report.Err(); err != nil {
		return report, err
	}
	if err := os.RemoveAll(opts.OutDir); err != nil {
		return report, err
	}
	return report, os.Rename(stage, opts.OutDir)
}

func progress(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
