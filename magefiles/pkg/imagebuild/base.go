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
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
)

// refNameAnnotation names an image inside an OCI layout.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// bases gives the base image of one platform.
type bases interface {
	Image(ctx context.Context, p platform.Platform) (v1.Image, error)
}

// ociBase returns base with OCI media types: a Docker-format base (Docker manifest, config and layer types) would
// otherwise give an OCI manifest listing Docker layers, which the OCI image spec does not allow. The layers' bytes,
// the config and the history are kept; an OCI base is returned as it is.
func ociBase(base v1.Image) (v1.Image, error) {
	m, err := base.Manifest()
	if err != nil {
		return nil, err
	}
	docker := m.MediaType == types.DockerManifestSchema2 || m.Config.MediaType == types.DockerConfigJSON
	for _, l := range m.Layers {
		if _, ok := ociLayerTypes[l.MediaType]; ok {
			docker = true
		}
	}
	if !docker {
		return base, nil
	}
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, err
	}
	layers, err := base.Layers()
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for i, l := range layers {
		mt := m.Layers[i].MediaType
		if oci, ok := ociLayerTypes[mt]; ok {
			mt = oci
		}
		if img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: mt}); err != nil {
			return nil, err
		}
	}
	return mutate.ConfigFile(img, cf)
}

// ociLayerTypes maps Docker layer media types to their OCI equivalents.
var ociLayerTypes = map[types.MediaType]types.MediaType{
	types.DockerLayer:             types.OCILayer,
	types.DockerUncompressedLayer: types.OCIUncompressedLayer,
	types.DockerForeignLayer:      types.OCIRestrictedLayer,
}

// resolveBase opens the base reference of spec. built holds the indexes assembled earlier in this run.
func resolveBase(ctx context.Context, spec Spec, built map[string]v1.ImageIndex, reg registryOptions) (bases, error) {
	ref := spec.From
	wrap := func(err error) error {
		return fmt.Errorf("%s: base %q (%s): %w; set %s to a reachable registry reference, oci:<OCI layout directory>, tarball:<image tarball> or rootfs:<os/arch>=<file-system tarball>", spec.Name, ref, spec.FromEnv, err, spec.FromEnv)
	}
	switch {
	case ref == "":
		what := "a base image"
		if spec.FromStage != "" {
			what = fmt.Sprintf("an image of the %q stage of images/%s/Containerfile (it installs the RPMs; see docs/images.md)", spec.FromStage, spec.Name)
		}
		return nil, fmt.Errorf("%s: no base: set %s to %s, as a registry reference, oci:<OCI layout directory>, tarball:<image tarball> or rootfs:<os/arch>=<file-system tarball>", spec.Name, spec.FromEnv, what)
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
	case strings.HasPrefix(ref, "tarball:"):
		img, err := tarball.ImageFromPath(strings.TrimPrefix(ref, "tarball:"), nil)
		if err != nil {
			return nil, wrap(err)
		}
		return singleBase{img: img, ref: ref}, nil
	case strings.HasPrefix(ref, "rootfs:"):
		b, err := rootfsBases(strings.TrimPrefix(ref, "rootfs:"))
		if err != nil {
			return nil, wrap(err)
		}
		return b, nil
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

// rootfsBases reads "os/arch=<file>[,os/arch=<file>...]": each file is a tarball of a whole root file system (as
// mmdebstrap or `tar -C root .` writes it), which becomes the single layer of that platform's base image.
func rootfsBases(spec string) (bases, error) {
	byPlatform := map[platform.Platform]string{}
	for _, part := range strings.Split(spec, ",") {
		pl, file, ok := strings.Cut(part, "=")
		p, err := platform.ParseOne(pl)
		if !ok || err != nil {
			return nil, fmt.Errorf("rootfs:%s: %q: want os/arch=<file-system tarball>, e.g. linux/amd64=/tmp/rootfs.tar", spec, part)
		}
		if _, err := os.Stat(file); err != nil {
			return nil, err
		}
		byPlatform[p] = file
	}
	return rootfsBase(byPlatform), nil
}

// rootfsBase makes a one-layer image per platform from file-system tarballs.
type rootfsBase map[platform.Platform]string

func (b rootfsBase) Image(_ context.Context, p platform.Platform) (v1.Image, error) {
	file, ok := b[p]
	if !ok {
		return nil, fmt.Errorf("no file-system tarball for %s", p)
	}
	l, err := tarball.LayerFromFile(file, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := scratch{}.Image(context.Background(), p)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer, History: v1.History{CreatedBy: "rootfs " + file}})
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
