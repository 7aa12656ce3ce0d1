package bundleinstall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// Bundle is a registry+v1 bundle: one ClusterServiceVersion and the other manifests beside it.
type Bundle struct {
	// CSV is the bundle's ClusterServiceVersion.
	CSV *v1alpha1.ClusterServiceVersion
	// Manifests are the bundle's other objects (CRDs, ConfigMaps, Services, ...), in file name order.
	Manifests []*unstructured.Unstructured
}

// Read reads the bundle in dir, whose manifests/ holds one ClusterServiceVersion and the other manifests (one
// object per file, as `go tool mage bundle` writes them).
func Read(dir string) (*Bundle, error) {
	files, err := filepath.Glob(filepath.Join(dir, "manifests", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	b := &Bundle{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := decode(data)
		if err != nil {
			return nil, fmt.Errorf("bundle manifest %s: %w", f, err)
		}
		for _, u := range objs {
			if u.GetKind() != v1alpha1.ClusterServiceVersionKind {
				b.Manifests = append(b.Manifests, u)
				continue
			}
			if b.CSV != nil {
				return nil, fmt.Errorf("bundle %s: two ClusterServiceVersions (%s and %s), want one", dir, b.CSV.Name, u.GetName())
			}
			csv := &v1alpha1.ClusterServiceVersion{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, csv); err != nil {
				return nil, fmt.Errorf("bundle manifest %s: ClusterServiceVersion: %w", f, err)
			}
			b.CSV = csv
		}
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("bundle %s: no ClusterServiceVersion in %s", dir, filepath.Join(dir, "manifests"))
	}
	return b, nil
}

// decode splits a YAML stream into objects, skipping empty documents.
func decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
