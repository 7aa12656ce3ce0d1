package catalog

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Package is operator/manifests/package.yaml: the OLM package of the bundle, and the packages whose installs
// OLM upgrades to this bundle when their Subscription's source is switched to this catalog.
type Package struct {
	// Name, DefaultChannel and Description make the olm.package blob of the bundle's own package.
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Description    string `json:"description,omitempty"`
	// UpgradeFrom are other packages that carry the same bundle, so that a Subscription to one of them upgrades
	// in place (OLM resolves upgrades within the Subscription's package only).
	UpgradeFrom []UpgradePackage `json:"upgradeFrom,omitempty"`
}

// UpgradePackage is a package that also carries the bundle.
type UpgradePackage struct {
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
	Description    string `json:"description,omitempty"`
	// Why says whose installs this package upgrades; documentation only.
	Why string `json:"why,omitempty"`
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
	seen := map[string]bool{p.Name: true}
	for i, u := range p.UpgradeFrom {
		if u.Name == "" || u.DefaultChannel == "" {
			return Package{}, fmt.Errorf("%s: upgradeFrom[%d]: name and defaultChannel are required", path, i)
		}
		if seen[u.Name] {
			return Package{}, fmt.Errorf("%s: upgradeFrom[%d]: package %s is listed twice", path, i, u.Name)
		}
		seen[u.Name] = true
	}
	return p, nil
}

// packages lists the bundle's own package first, then the packages it upgrades, as (name, default channel,
// description).
func (p Package) packages() []UpgradePackage {
	out := []UpgradePackage{{Name: p.Name, DefaultChannel: p.DefaultChannel, Description: p.Description}}
	return append(out, p.UpgradeFrom...)
}
