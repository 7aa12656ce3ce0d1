package imagebuild

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/internal/platform"
)

// refNameAnnotation names an image inside an OCI layout.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// bases gives the base image of one platform.
type bases interface {
	Image(ctx context.Context, p platform.Platform) (v1.Image, error)
}

// resolveBase opens the base reference of spec. built holds the indexes assembled earlier in this run.
func resolveBase(ctx context.Context, spec Spec, built map[string]v1.ImageIndex, reg registryOptions) (bases, error) {
	ref := spec.From
	wrap := func(err error) error {
		return fmt.Errorf("%s: base %q (%s): %w; set %s to a reachable registry reference or to oci:<OCI layout directory>", spec.Name, ref, spec.FromEnv, err, spec.FromEnv)
	}
	switch {
	case ref == "scratch":
		return scratch{}, nil
	case strings.HasPrefix(ref, "image:"):
		idx, ok := built[strings.TrimPrefix(ref, "image:")]
		if !ok {
			return nil, wrap(fmt.Errorf("no image %q was assembled before it in this run", strings.TrimPrefix(ref, "image:")))
		}
		return indexBases{idx: idx, ref: ref}, nil
	case strings.HasPrefix(ref, "oci:"):
		idx, err := openLayout(strings.TrimPrefix(ref, "oci:"))
		if err != nil {
			return nil, wrap(err)
		}
		return indexBases{idx: idx, ref: ref}, nil
	}
	r, err := name.ParseReference(ref, reg.nameOptions()...)
	if err != nil {
		return nil, wrap(fmt.Errorf("not a registry reference, oci:<dir>, image:<name> or scratch: %w", err))
	}
	desc, err := remote.Get(r, reg.remoteOptions(ctx)...)
	if err != nil {
		return nil, wrap(err)
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, wrap(err)
		}
		return indexBases{idx: idx, ref: ref}, nil
	}
	img, err := desc.Image()
	if err != nil {
		return nil, wrap(err)
	}
	return singleBase{img: img, ref: ref}, nil
}

// openLayout opens "dir" or "dir:refname". A layout whose index.json lists one image index stands for that index;
// otherwise the layout's own index is used and its images are matched by platform.
func openLayout(spec string) (v1.ImageIndex, error) {
	dir, refName := spec, ""
	if _, err := os.Stat(dir); err != nil {
		if i := strings.LastIndex(spec, ":"); i > 0 {
			dir, refName = spec[:i], spec[i+1:]
		}
	}
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the OCI layout %s: %w", dir, err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		return nil, err
	}
	var picked []v1.Descriptor
	for _, d := range im.Manifests {
		if refName == "" || d.Annotations[refNameAnnotation] == refName {
			picked = append(picked, d)
		}
	}
	if refName != "" && len(picked) == 0 {
		return nil, fmt.Errorf("the OCI layout %s has no manifest named %q (annotation %s)", dir, refName, refNameAnnotation)
	}
	if len(picked) == 1 && picked[0].MediaType.IsIndex() {
		return root.ImageIndex(picked[0].Digest)
	}
	if refName != "" {
		return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), indexAddenda(root, picked)...), nil
	}
	return root, nil
}

func indexAddenda(root v1.ImageIndex, descs []v1.Descriptor) []mutate.IndexAddendum {
	var out []mutate.IndexAddendum
	for _, d := range descs {
		if img, err := root.Image(d.Digest); err == nil {
			out = append(out, mutate.IndexAddendum{Add: img, Descriptor: d})
		}
	}
	return out
}

// indexBases picks the image of a platform from an index.
type indexBases struct {
	idx v1.ImageIndex
	ref string
}

func (b indexBases) Image(_ context.Context, p platform.Platform) (v1.Image, error) {
	im, err := b.idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() {
			continue
		}
		dp := d.Platform
		if dp == nil {
			img, err := b.idx.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return nil, err
			}
			dp = cf.Platform()
		}
		if dp != nil && dp.OS == p.OS && dp.Architecture == p.Arch {
			return b.idx.Image(d.Digest)
		}
		if dp != nil {
			have = append(have, dp.OS+"/"+dp.Architecture)
		}
	}
	return nil, fmt.Errorf("%s has no image for %s (it has: %s)", b.ref, p, strings.Join(have, ", "))
}

// singleBase is a base that is one image, usable only for its own platform.
type singleBase struct {
	img v1.Image
	ref string
}

func (b singleBase) Image(_ context.Context, p platform.Platform) (v1.Image, error) {
	cf, err := b.img.ConfigFile()
	if err != nil {
		return nil, err
	}
	if cf.OS != p.OS || cf.Architecture != p.Arch {
		return nil, fmt.Errorf("%s is a single %s/%s image, not an index with %s", b.ref, cf.OS, cf.Architecture, p)
	}
	return b.img, nil
}

// scratch is the empty base.
type scratch struct{}

func (scratch) Image(_ context.Context, p platform.Platform) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = p.OS, p.Arch
	return mutate.ConfigFile(img, cf)
}
