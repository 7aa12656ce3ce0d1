package catalog

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/registry"
)

// Bundle is a rendered bundle: its olm.bundle and what the upgrade graph needs from its CSV and annotations.
type Bundle struct {
	declcfg.Bundle
	// Version is the CSV's spec.version; SkipRange its olm.skipRange annotation.
	Version   string
	SkipRange string
	// Channels come from metadata/annotations.yaml.
	Channels []string
}

// RenderBundle reads the bundle directory dir (manifests/ and metadata/) with operator-registry's bundle parser and
// renders it into the olm.bundle that `opm render` writes for the bundle image ref: the properties (olm.package,
// olm.gvk, the CSV's olm.properties, one olm.bundle.object per manifest) and the related images (the CSV's, the
// bundle image, the operator's containers).
func RenderBundle(dir, ref string) (Bundle, error) {
	in, err := registry.NewImageInput(image.SimpleReference(ref), dir)
	if err != nil {
		return Bundle{}, fmt.Errorf("reading the bundle in %s: %w", dir, err)
	}
	b := in.Bundle
	objs, props, err := registry.ObjectsAndPropertiesFromBundle(b)
	if err != nil {
		return Bundle{}, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	csv, err := b.ClusterServiceVersion()
	if err != nil {
		return Bundle{}, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	version, err := csv.GetVersion()
	if err != nil {
		return Bundle{}, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	related, err := relatedImages(csv, ref)
	if err != nil {
		return Bundle{}, fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	csvJSON, err := json.Marshal(csv)
	if err != nil {
		return Bundle{}, err
	}
	if len(b.Channels) == 0 {
		return Bundle{}, fmt.Errorf("bundle %s in %s: metadata/annotations.yaml names no channel", b.Name, dir)
	}
	return Bundle{
		Bundle: declcfg.Bundle{
			Schema: declcfg.SchemaBundle, Name: b.Name, Package: b.Package, Image: ref,
			Properties: bundleObjectsLast(props), RelatedImages: related, Objects: objs, CsvJSON: string(csvJSON),
		},
		Version: version, SkipRange: csv.GetSkipRange(), Channels: b.Channels,
	}, nil
}

// relatedImages are the CSV's related images, then the bundle image and the operator's container images when not
// listed, sorted by image as `opm render` sorts them.
func relatedImages(csv *registry.ClusterServiceVersion, bundleRef string) ([]declcfg.RelatedImage, error) {
	var spec struct {
		RelatedImages []declcfg.RelatedImage `json:"relatedImages"`
	}
	if err := json.Unmarshal(csv.Spec, &spec); err != nil {
		return nil, fmt.Errorf("spec.relatedImages: %w", err)
	}
	out := spec.RelatedImages
	listed := map[string]bool{}
	for _, ri := range out {
		listed[ri.Image] = true
	}
	extra := []string{bundleRef}
	operatorImages, err := csv.GetOperatorImages()
	if err != nil {
		return nil, err
	}
	for im := range operatorImages {
		extra = append(extra, im)
	}
	for _, im := range extra {
		if im != "" && !listed[im] {
			out = append(out, declcfg.RelatedImage{Image: im})
			listed[im] = true
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out, nil
}

// bundleObjectsLast moves the olm.bundle.object properties after the others, as `opm render` orders them.
func bundleObjectsLast(props []property.Property) []property.Property {
	var others, objs []property.Property
	for _, p := range props {
		if p.Type == property.TypeBundleObject || p.Type == property.TypeCSVMetadata {
			objs = append(objs, p)
		} else {
			others = append(others, p)
		}
	}
	return append(others, objs...)
}
