package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files of operator/manifests that describe the bundle rather than being part of it (besides ArtFile and
// ImageReferencesFile).
const (
	ImagesFile  = "images.yaml"
	PackageFile = "package.yaml"
	// CSVFile is the CSV's name, also its name in the bundle.
	CSVFile = "aws-efs-csi-driver-operator.clusterserviceversion.yaml"
	// AnnotationsFile is the bundle metadata, under metadata/.
	AnnotationsFile = "annotations.yaml"
)

// Sources are the files a bundle is rendered from.
type Sources struct {
	// Manifests is operator/manifests: the CSV, the other manifests, metadata/annotations.yaml, images.yaml,
	// image-references, art.yaml and package.yaml.
	Manifests string
	// CRDs is operator/assets/crds, copied into the bundle unchanged.
	CRDs string
	// MirrorSet is .tekton/images-mirror-set.yaml.
	MirrorSet string
}

// SourcesIn returns the sources of the repository at root.
func SourcesIn(root string) Sources {
	return Sources{
		Manifests: filepath.Join(root, "operator", "manifests"), CRDs: filepath.Join(root, "operator", "assets", "crds"),
		MirrorSet: filepath.Join(root, filepath.FromSlash(MirrorSetFile)),
	}
}

// Values are what the CSV source is rendered with.
type Values struct {
	// Version is the bundle's version without the leading v; art.yaml's rewrites put it in place of the CSV's.
	Version string
	// Images replace, each, every occurrence of their Source reference by their Ref.
	Images []Resolved
}

// renderCSV rewrites the CSV source: every image reference by its resolved one, then art.yaml's version rewrites.
func renderCSV(src Sources, data []byte, v Values) ([]byte, error) {
	s := string(data)
	for _, im := range v.Images {
		if !strings.Contains(s, im.Source) {
			return nil, fmt.Errorf("%s: %s (%s) is not in the file", CSVFile, im.Source, im.Placeholder)
		}
		s = strings.ReplaceAll(s, im.Source, im.Ref)
	}
	updates, err := ReadArt(filepath.Join(src.Manifests, ArtFile))
	if err != nil {
		return nil, err
	}
	return ApplyArt(CSVFile, []byte(s), updates[CSVFile], v.Version)
}

// Render writes the bundle into dir/manifests and dir/metadata: every YAML manifest of src.Manifests except
// images.yaml, package.yaml and art.yaml (the CSV rendered with v), the CRDs of src.CRDs, and
// metadata/annotations.yaml.
func Render(src Sources, dir string, v Values) error {
	manifests := filepath.Join(dir, "manifests")
	metadata := filepath.Join(dir, "metadata")
	for _, d := range []string{manifests, metadata} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	files, err := yamlFiles(src.Manifests)
	if err != nil {
		return err
	}
	hasCSV := false
	for _, name := range files {
		if name == ImagesFile || name == PackageFile || name == ArtFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src.Manifests, name))
		if err != nil {
			return err
		}
		if name == CSVFile {
			hasCSV = true
			if data, err = renderCSV(src, data, v); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(manifests, name), data, 0o644); err != nil {
			return err
		}
	}
	if !hasCSV {
		return fmt.Errorf("%s: no %s: the bundle needs its CSV", src.Manifests, CSVFile)
	}
	for _, sub := range []struct{ from, to string }{{src.CRDs, manifests}} {
		crds, err := yamlFiles(sub.from)
		if err != nil {
			return err
		}
		for _, name := range crds {
			if err := copyFile(filepath.Join(sub.from, name), filepath.Join(sub.to, name)); err != nil {
				return err
			}
		}
	}
	return copyFile(filepath.Join(src.Manifests, "metadata", AnnotationsFile), filepath.Join(metadata, AnnotationsFile))
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

// yamlFiles lists the *.yaml and *.yml files directly in dir, sorted.
func yamlFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
