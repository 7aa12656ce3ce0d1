package catalog

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/operator-framework/operator-registry/alpha/action/migrations"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/template/basic"
	"github.com/operator-framework/operator-registry/pkg/image"

	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
)

// TemplateFile is the name of a per-OpenShift-version catalog template (opm's basic template), in
// images/aws-efs-csi-driver-operator-catalog/v<OpenShift version>/, beside the catalog rendered from it in
// catalog/<package>/catalog.yaml.
const TemplateFile = "catalog-template.yaml"

// MigrateLevelFor is the migrate level a catalog for OpenShift ocp ("4.18", "5.0") must have: Konflux's FBC
// validation requires olm.csv.metadata from 4.17 on and olm.bundle.object before
// (konflux-ci/konflux-operator-tasks@dee7049 task/validate-fbc/0.2, OCP_BUNDLE_METADATA_THRESHOLD 4.17).
func MigrateLevelFor(ocp string) (string, error) {
	var major, minor int
	if _, err := fmt.Sscanf(ocp, "%d.%d", &major, &minor); err != nil || fmt.Sprintf("%d.%d", major, minor) != ocp {
		return "", fmt.Errorf("OpenShift version %q: want MAJOR.MINOR", ocp)
	}
	if major > 4 || minor >= 17 {
		return DefaultMigrateLevel, nil
	}
	return "none", nil
}

// RenderTemplate renders the basic catalog template at path as `opm alpha render-template basic` does, pulling
// each bundle image it names through reg, applies the migrate level, and then writes every image reference of the
// result (olm.bundle image, related images) under the name it is released with (mirrors: a reference to a Konflux
// repository becomes one to registry.redhat.io, as Konflux's run-opm-command does with the same
// ImageDigestMirrorSet).
func RenderTemplate(ctx context.Context, path string, reg image.Registry, level string, mirrors bundle.MirrorSet) (*declcfg.DeclarativeConfig, error) {
	migs, err := migrations.NewMigrations(level)
	if err != nil {
		return nil, fmt.Errorf("migrate level %q: %w", level, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// What opm's render does for a bundle image, without its containers/image registry (cgo): pull, unpack,
	// render the bundle directory (RenderBundle, checked against `opm render` in the tests), migrate.
	render := func(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
		if err := reg.Pull(ctx, image.SimpleReference(ref)); err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "bundle-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if err := reg.Unpack(ctx, image.SimpleReference(ref), dir); err != nil {
			return nil, err
		}
		b, err := RenderBundle(dir, ref)
		if err != nil {
			return nil, err
		}
		cfg := &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{b.Bundle}}
		return cfg, migs.Migrate(cfg)
	}
	cfg, err := (&basic.Factory{}).CreateTemplate(render).Render(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		b.Image = mirrors.Released(b.Image)
		for j := range b.RelatedImages {
			b.RelatedImages[j].Image = mirrors.Released(b.RelatedImages[j].Image)
		}
	}
	return cfg, nil
}

// prunableChannel matches the channels Konflux lets a catalog drop entries from.
var prunableChannel = regexp.MustCompile(`.*(dev-preview|pre-ga|candidate).*`)

// CheckNoPruning refuses a catalog that drops what is released: for every package of catalog that released also
// has, every channel of released and every entry of it must be in catalog, except in channels named
// *dev-preview*, *pre-ga* or *candidate*. This is the rule of Konflux's fbc-target-index-pruning-check, which
// compares the fragment with redhat-operator-index:v<OpenShift version>
// (konflux-ci/konflux-operator-tasks@dee7049 task/fbc-target-index-pruning-check/0.1).
func CheckNoPruning(catalog, released declcfg.DeclarativeConfig) error {
	ours := map[string]bool{}
	entries := map[string]map[string]bool{}
	for _, c := range catalog.Channels {
		ours[c.Package] = true
		key := c.Package + "." + c.Name
		entries[key] = map[string]bool{}
		for _, e := range c.Entries {
			entries[key][e.Name] = true
		}
	}
	var errs []error
	for _, c := range released.Channels {
		if !ours[c.Package] || prunableChannel.MatchString(c.Name) {
			continue
		}
		key := c.Package + "." + c.Name
		have, ok := entries[key]
		if !ok {
			errs = append(errs, fmt.Errorf("the catalog prunes the released channel %s", key))
			continue
		}
		for _, e := range c.Entries {
			if !have[e.Name] {
				errs = append(errs, fmt.Errorf("the catalog prunes the released %s from channel %s", e.Name, key))
			}
		}
	}
	return errors.Join(errs...)
}

// Registry is an operator-registry image.Registry over go-containerregistry: it pulls bundle images from their
// registries (over plain HTTP for Insecure ones, such as a loopback registry in tests).
type Registry struct {
	Keychain  authn.Keychain
	Transport http.RoundTripper
	Insecure  bool
	images    map[string]v1.Image
}

var _ image.Registry = (*Registry)(nil)

func (r *Registry) options(ctx context.Context) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx)}
	if r.Keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(r.Keychain))
	}
	if r.Transport != nil {
		opts = append(opts, remote.WithTransport(r.Transport))
	}
	return opts
}

// Pull fetches the image (for the platform of a single-platform bundle index, its first manifest).
func (r *Registry) Pull(ctx context.Context, ref image.Reference) error {
	var nopts []name.Option
	if r.Insecure {
		nopts = append(nopts, name.Insecure)
	}
	n, err := name.ParseReference(ref.String(), nopts...)
	if err != nil {
		return fmt.Errorf("bundle image %q: %w", ref, err)
	}
	desc, err := remote.Get(n, r.options(ctx)...)
	if err != nil {
		return fmt.Errorf("pulling %s: %w", ref, err)
	}
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return err
		}
		im, err := idx.IndexManifest()
		if err != nil || len(im.Manifests) == 0 {
			return fmt.Errorf("pulling %s: an index without manifests (%v)", ref, err)
		}
		if img, err = idx.Image(im.Manifests[0].Digest); err != nil {
			return err
		}
	} else if img, err = desc.Image(); err != nil {
		return err
	}
	if r.images == nil {
		r.images = map[string]v1.Image{}
	}
	r.images[ref.String()] = img
	return nil
}

func (r *Registry) pulled(ref image.Reference) (v1.Image, error) {
	img, ok := r.images[ref.String()]
	if !ok {
		return nil, fmt.Errorf("image %s was not pulled", ref)
	}
	return img, nil
}

// Unpack writes the image's file system into dir.
func (r *Registry) Unpack(_ context.Context, ref image.Reference, dir string) error {
	img, err := r.pulled(ref)
	if err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
	}
}

// Labels returns the image's labels.
func (r *Registry) Labels(_ context.Context, ref image.Reference) (map[string]string, error) {
	img, err := r.pulled(ref)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	return cf.Config.Labels, nil
}

// Destroy forgets the pulled images.
func (r *Registry) Destroy() error {
	r.images = nil
	return nil
}

// TemplateBundleImages lists the olm.bundle image references of the basic template at path (schema
// olm.template.basic, its entries[] the blobs opm renders), for the checks of the bundle reference (digest-pinned,
// in the nudged repository) and of the rendered catalog.
func TemplateBundleImages(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t struct {
		Schema  string `json:"schema"`
		Entries []struct {
			Schema string `json:"schema"`
			Image  string `json:"image"`
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if t.Schema != "olm.template.basic" {
		return nil, fmt.Errorf("%s: schema %q: want olm.template.basic", path, t.Schema)
	}
	var out []string
	for i, e := range t.Entries {
		if e.Schema != declcfg.SchemaBundle {
			continue
		}
		if strings.TrimSpace(e.Image) == "" {
			return nil, fmt.Errorf("%s: entries[%d] (olm.bundle) has no image: want <repository>@sha256:<digest>", path, i)
		}
		out = append(out, strings.TrimSpace(e.Image))
	}
	return out, nil
}
