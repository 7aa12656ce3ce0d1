package catalog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Blob is one object of a file-based catalog, as JSON.
type Blob = map[string]any

// Bundle is what the catalog needs to know about a rendered bundle.
type Bundle struct {
	// Name is the CSV name, e.g. aws-efs-csi-driver-operator.v1.2.3.
	Name    string
	Package string
	Version string
	// SkipRange is the CSV's olm.skipRange annotation.
	SkipRange string
	// Channels and DefaultChannel come from metadata/annotations.yaml.
	Channels       []string
	DefaultChannel string
	// Blob is the olm.bundle object, with the image set.
	Blob Blob
}

// manifest is one file of the bundle's manifests/ directory.
type manifest struct {
	json []byte
	obj  map[string]any
}

// ReadBundle reads the bundle in dir (manifests/ and metadata/annotations.yaml) and builds its olm.bundle blob the
// way `opm render` does: olm.gvk for each owned CRD, the CSV's olm.properties, olm.package, one olm.bundle.object
// per manifest, and relatedImages from the CSV plus the bundle image itself.
func ReadBundle(dir, image string) (Bundle, error) {
	ann, err := readAnnotations(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return Bundle{}, err
	}
	b := Bundle{
		Package:        ann["operators.operatorframework.io.bundle.package.v1"],
		DefaultChannel: ann["operators.operatorframework.io.bundle.channel.default.v1"],
	}
	for _, c := range strings.Split(ann["operators.operatorframework.io.bundle.channels.v1"], ",") {
		if c = strings.TrimSpace(c); c != "" {
			b.Channels = append(b.Channels, c)
		}
	}
	if b.Package == "" || len(b.Channels) == 0 {
		return Bundle{}, fmt.Errorf("%s: the package and channels annotations are required", filepath.Join(dir, "metadata", "annotations.yaml"))
	}
	manifests, err := readManifests(filepath.Join(dir, "manifests"))
	if err != nil {
		return Bundle{}, err
	}
	var csv map[string]any
	for _, m := range manifests {
		if m.obj["kind"] == "ClusterServiceVersion" {
			csv = m.obj
		}
	}
	if csv == nil {
		return Bundle{}, fmt.Errorf("%s: no ClusterServiceVersion", filepath.Join(dir, "manifests"))
	}
	b.Name = str(csv, "metadata", "name")
	b.Version = str(csv, "spec", "version")
	b.SkipRange = str(csv, "metadata", "annotations", "olm.skipRange")
	props, err := properties(b, csv, manifests)
	if err != nil {
		return Bundle{}, err
	}
	b.Blob = Blob{
		"schema": "olm.bundle", "name": b.Name, "package": b.Package, "image": image,
		"properties": props, "relatedImages": relatedImages(csv, image),
	}
	return b, nil
}

func properties(b Bundle, csv map[string]any, manifests []manifest) ([]any, error) {
	var props []any
	owned, _ := get(csv, "spec", "customresourcedefinitions", "owned").([]any)
	for _, o := range owned {
		crd, _ := o.(map[string]any)
		name, _ := crd["name"].(string)
		_, group, _ := strings.Cut(name, ".")
		props = append(props, Blob{"type": "olm.gvk", "value": Blob{"group": group, "kind": crd["kind"], "version": crd["version"]}})
	}
	if v := str(csv, "metadata", "annotations", "olm.properties"); v != "" {
		var extra []any
		if err := json.Unmarshal([]byte(v), &extra); err != nil {
			return nil, fmt.Errorf("%s: olm.properties %q: %w", b.Name, v, err)
		}
		props = append(props, extra...)
	}
	props = append(props, Blob{"type": "olm.package", "value": Blob{"packageName": b.Package, "version": b.Version}})
	for _, m := range manifests {
		props = append(props, Blob{"type": "olm.bundle.object", "value": Blob{"data": base64.StdEncoding.EncodeToString(m.json)}})
	}
	return props, nil
}

func relatedImages(csv map[string]any, image string) []any {
	seen := map[string]string{}
	list, _ := get(csv, "spec", "relatedImages").([]any)
	for _, r := range list {
		ri, _ := r.(map[string]any)
		img, _ := ri["image"].(string)
		n, _ := ri["name"].(string)
		seen[img] = n
	}
	if image != "" {
		if _, ok := seen[image]; !ok {
			seen[image] = ""
		}
	}
	imgs := make([]string, 0, len(seen))
	for img := range seen {
		imgs = append(imgs, img)
	}
	sort.Strings(imgs)
	out := make([]any, 0, len(imgs))
	for _, img := range imgs {
		out = append(out, Blob{"image": img, "name": seen[img]})
	}
	return out
}

func readManifests(dir string) ([]manifest, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []manifest
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name()), err)
		}
		var obj map[string]any
		if err := json.Unmarshal(j, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name()), err)
		}
		out = append(out, manifest{json: j, obj: obj})
	}
	return out, nil
}

func readAnnotations(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Annotations, nil
}

func get(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func str(obj map[string]any, path ...string) string {
	s, _ := get(obj, path...).(string)
	return s
}
