package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Files of operator/manifests that describe the bundle rather than being part of it.
const (
	ImagesFile  = "images.yaml"
	PackageFile = "package.yaml"
	// CSVFile is the CSV template's name, also its name in the bundle.
	CSVFile = "aws-efs-csi-driver-operator.clusterserviceversion.yaml"
	// AnnotationsFile is the bundle metadata, under metadata/.
	AnnotationsFile = "annotations.yaml"
)

// Sources are the directories a bundle is rendered from.
type Sources struct {
	// Manifests is operator/manifests: the CSV template, the other manifests, metadata/annotations.yaml,
	// images.yaml and package.yaml.
	Manifests string
	// CRDs is operator/assets/crds, copied into the bundle unchanged.
	CRDs string
}

// SourcesIn returns the sources of the repository at root.
func SourcesIn(root string) Sources {
	return Sources{Manifests: filepath.Join(root, "operator", "manifests"), CRDs: filepath.Join(root, "operator", "assets", "crds")}
}

// Values are what the placeholders of the templates are filled with.
type Values struct {
	// Version is the operator module's version without the leading v.
	Version string
	// Created is written as createdAt.
	Created time.Time
	Images  []Resolved
}

func (v Values) table() map[string]string {
	t := map[string]string{"VERSION": v.Version, "CREATED_AT": v.Created.UTC().Format(time.RFC3339)}
	for _, im := range v.Images {
		t[im.Placeholder] = im.Ref
	}
	return t
}

var placeholderRE = regexp.MustCompile(`\$\{([A-Za-z0-9_]*)\}`)

// fill replaces every ${NAME} of data with its value; an unknown name is an error naming the file.
func fill(file string, data []byte, values map[string]string) ([]byte, error) {
	var unknown []string
	out := placeholderRE.ReplaceAllFunc(data, func(m []byte) []byte {
		key := string(placeholderRE.FindSubmatch(m)[1])
		v, ok := values[key]
		if !ok {
			unknown = append(unknown, "${"+key+"}")
			return m
		}
		return []byte(v)
	})
	if len(unknown) > 0 {
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, "${"+k+"}")
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("%s: unknown placeholder %s: want one of %s", file, strings.Join(unknown, ", "), strings.Join(keys, ", "))
	}
	return out, nil
}

// Render writes the bundle into dir/manifests and dir/metadata, which must not exist yet: every YAML manifest of
// src.Manifests except images.yaml and package.yaml, the CRDs of src.CRDs, and metadata/annotations.yaml, with
// every placeholder filled.
func Render(src Sources, dir string, v Values) error {
	values := v.table()
	manifests := filepath.Join(dir, "manifests")
	metadata := filepath.Join(dir, "metadata")
	for _, d := range []string{manifests, metadata} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	templates, err := yamlFiles(src.Manifests)
	if err != nil {
		return err
	}
	hasCSV := false
	for _, name := range templates {
		if name == ImagesFile || name == PackageFile {
			continue
		}
		hasCSV = hasCSV || name == CSVFile
		if err := renderFile(filepath.Join(src.Manifests, name), filepath.Join(manifests, name), values); err != nil {
			return err
		}
	}
	if !hasCSV {
		return fmt.Errorf("%s: no %s: the bundle needs its CSV template", src.Manifests, CSVFile)
	}
	crds, err := yamlFiles(src.CRDs)
	if err != nil {
		return err
	}
	for _, name := range crds {
		data, err := os.ReadFile(filepath.Join(src.CRDs, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(manifests, name), data, 0o644); err != nil {
			return err
		}
	}
	return renderFile(filepath.Join(src.Manifests, "metadata", AnnotationsFile), filepath.Join(metadata, AnnotationsFile), values)
}

func renderFile(from, to string, values map[string]string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	out, err := fill(from, data, values)
	if err != nil {
		return err
	}
	return os.WriteFile(to, out, 0o644)
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
