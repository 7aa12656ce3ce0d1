package konflux

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// NotOffline are the Konflux/ART release rules that no offline check can decide; `go tool mage konflux` prints them
// every time, with Pending's items, in one list.
var NotOffline = []string{
	"the pinned task bundles exist on quay.io and are still in Conforma's trusted-task data (MintMaker moves them on)",
	"the tenant (aws-efs-csi-tenant), application and service-account names match what Konflux onboarding created",
	"the Component CRs carry the nudge relations (build-nudges-ref: aws-efs-utils-base -> aws-efs-csi-driver; aws-efs-csi-driver and aws-efs-csi-driver-operator -> aws-efs-csi-driver-operator-bundle; aws-efs-csi-driver-operator-bundle -> every aws-efs-csi-driver-operator-catalog-v<version>)",
	"the ReleasePlanAdmission releases to the sources of .tekton/images-mirror-set.yaml, and each catalog component to redhat-operator-index v<its version> (validate-fbc and the pruning check run against those indexes)",
	"the hermetic builds themselves: prefetch, buildah on the multi-platform controller, and the release pipeline's Conforma run",
}

// Pending returns what a shipping Konflux build needs that cannot be produced on this machine, although Check
// finds the files in place: an RPM lock that resolves every package of its input for every architecture (needs
// the entitled RHEL repositories), the first push digest of each of our own components wherever another
// component is built from it (the all-zero placeholder, or a versions-file reference without a digest), every
// image of the CSV whose digest is not recorded (bundle.NotRecorded), and every OpenShift version's catalog not
// rendered from its template yet, or older than it (catalog.FragmentStatus). None
// means the builds have all they need; `go tool mage test` runs Check only, `go tool mage konflux` both.
func Pending(root string, runs []Run) []string {
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
	components, err := Components(root)
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, c := range components {
		_, repo := PushRepo(runs, c)
		if repo == "" {
			continue
		}
		for _, file := range append([]string{versions.File}, keys(LabelledImages)...) {
			data, err := os.ReadFile(filepath.Join(root, file))
			if err == nil && strings.Contains(string(data), repo+"@"+PlaceholderDigest) {
				problems = append(problems, fmt.Sprintf("%s: first push digest not recorded: %s@%s is the placeholder; the first push build of %s nudges it (ci/README.md)", file, repo, PlaceholderDigest, c))
			}
		}
	}
	// The CSV's (and image-references') digests: our components' first pushes and the payload's sidecars.
	if unrecorded, err := bundle.NotRecorded(root); err != nil {
		problems = append(problems, err.Error())
	} else {
		for _, u := range unrecorded {
			problems = append(problems, "bundle image "+u)
		}
	}
	// Each OpenShift version's committed catalog: not rendered yet (before the bundle's first push), or older
	// than its template (after a nudge).
	if status, err := catalog.FragmentStatus(context.Background(), root); err != nil {
		problems = append(problems, err.Error())
	} else {
		problems = append(problems, status...)
	}
	v, err := versions.Load(root)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, k := range versions.Keys {
		ref := v.Get(k)
		if strings.HasPrefix(ref, "quay.io/redhat-user-workloads/") && !strings.Contains(ref, "@sha256:") {
			problems = append(problems, fmt.Sprintf("%s: %s=%s: first push digest not recorded (no @sha256:); commit the digest of the component's first push build; its nudges keep it current", versions.File, k, ref))
		}
	}
	return problems
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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
