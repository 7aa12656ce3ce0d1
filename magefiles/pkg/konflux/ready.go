package konflux

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// Ready returns every reason a hermetic Konflux build of runs would fail although Check finds the files in
// place: an RPM lock that does not resolve every package of its input for every architecture, and a base image of
// one of our own components in the versions file that is not pinned by digest. None means the builds have all
// they need; `go tool mage konflux` runs Check and Ready.
func Ready(root string, runs []Run) []string {
	var problems []string
	seen := map[string]bool{}
	for _, r := range runs {
		var inputs []Prefetch
		_ = json.Unmarshal([]byte(r.Param("prefetch-input")), &inputs)
		for _, p := range inputs {
			if p.Type != "rpm" || seen[p.Path] {
				continue
			}
			seen[p.Path] = true
			problems = append(problems, lockResolves(filepath.Join(root, p.Path))...)
		}
	}
	v, err := versions.Load(root)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, k := range versions.Keys {
		ref := v.Get(k)
		if strings.HasPrefix(ref, "quay.io/redhat-user-workloads/") && !strings.Contains(ref, "@sha256:") {
			problems = append(problems, fmt.Sprintf("%s: %s=%s is not pinned by digest: commit the digest of the component's first push build (repository:tag@sha256:...); its nudges keep it current", versions.File, k, ref))
		}
	}
	return problems
}

// lockResolves checks that rpms.lock.yaml in dir lists, for every architecture, each package of rpms.in.yaml with
// a URL and a checksum (hermeto downloads exactly those).
func lockResolves(dir string) []string {
	want, err := LockInputPackages(filepath.Join(dir, "rpms.in.yaml"))
	if err != nil {
		return []string{err.Error()}
	}
	lockPath := filepath.Join(dir, "rpms.lock.yaml")
	data, err := os.ReadFile(lockPath)
	if err != nil {
		return []string{err.Error()}
	}
	var lock struct {
		Arches []struct {
			Arch     string `json:"arch"`
			Packages []struct {
				Name     string `json:"name"`
				URL      string `json:"url"`
				Checksum string `json:"checksum"`
			} `json:"packages"`
		} `json:"arches"`
	}
	if err := yaml.Unmarshal(data, &lock); err != nil {
		return []string{fmt.Sprintf("%s: %v", lockPath, err)}
	}
	var problems []string
	for _, arch := range lockArches {
		have := map[string]bool{}
		found := false
		for _, a := range lock.Arches {
			if a.Arch != arch {
				continue
			}
			found = true
			for _, p := range a.Packages {
				if p.URL != "" && strings.HasPrefix(p.Checksum, "sha256:") {
					have[p.Name] = true
				}
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("%s: no entry for arch %s", lockPath, arch))
			continue
		}
		var missing []string
		for _, p := range want {
			if !have[p] {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("%s: arch %s resolves no %s (with url and sha256 checksum): regenerate it with rpm-lockfile-prototype (ci/README.md)", lockPath, arch, strings.Join(missing, ", ")))
		}
	}
	return problems
}
