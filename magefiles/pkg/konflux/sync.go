package konflux

import (
	"fmt"
	"os"
	"sort"

	"sigs.k8s.io/yaml"
)

// LockInputPackages returns the packages of an rpm-lockfile-prototype input file, sorted.
func LockInputPackages(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in struct {
		Packages []string `json:"packages"`
	}
	if err := yaml.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sort.Strings(in.Packages)
	return in.Packages, nil
}
