package catalog

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Package is operator/manifests/package.yaml: the OLM package of the bundle. The catalog carries the bundle in
// this package only (see Resolvable).
type Package struct {
	// Name, DefaultChannel and Description make the olm.package blob of the bundle's own package.
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Description    string `json:"description,omitempty"`
}

// ReadPackage reads package.yaml.
func ReadPackage(path string) (Package, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Package{}, err
	}
	var p Package
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return Package{}, fmt.Errorf("%s: %w", path, err)
	}
	if p.Name == "" || p.DefaultChannel == "" {
		return Package{}, fmt.Errorf("%s: name and defaultChannel are required", path)
	}
	return p, nil
}
