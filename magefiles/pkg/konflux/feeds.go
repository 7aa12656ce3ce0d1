package konflux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
)

// CatalogPackage is the OLM package the catalogs hold (operator/manifests/package.yaml).
const CatalogPackage = "aws-efs-csi-driver-operator"

// componentSources are the repository paths a component's image is built from beyond what Feeds derives from
// the PipelineRun (Containerfile folder, build-args file, prefetch inputs, go.work) and from the Go package graph
// (componentPrograms): the files its builder stage reads that are not Go sources.
var componentSources = map[string][]string{
	"aws-efs-utils-base":                 {"efs-utils/layout.json", "requirements.txt.ocp"},
	"aws-efs-csi-driver":                 {"driver/VERSION"},
	"aws-efs-csi-driver-operator":        {"operator/VERSION"},
	"aws-efs-csi-driver-operator-bundle": {"operator/manifests/aws-efs-csi-driver-operator.clusterserviceversion.yaml", "operator/VERSION", "driver/VERSION"},
}

// componentPrograms are the Go packages a component's builder stage compiles besides the magefile (which every
// stage that runs `go tool mage` compiles): every workspace package they import feeds the image, so a change to
// any of them (the operator imports the driver module's version package, for one) must trigger the build.
var componentPrograms = map[string][]string{
	"aws-efs-csi-driver":                 {"./driver/cmd/aws-efs-csi-driver"},
	"aws-efs-csi-driver-operator":        {"./operator/cmd/aws-efs-csi-driver-operator"},
	"aws-efs-csi-driver-operator-bundle": {},
}

// SourceCache holds GoSources per component for one root, so that a check of a component's two PipelineRuns
// lists its packages once.
type SourceCache map[string][]string

// magefileKey is the SourceCache entry of the magefile's own packages.
const magefileKey = "magefile"

// GoSources lists one Go file of every package inside root that building pkgs needs (`go list -deps` in the
// workspace), relative to root: a trigger fires on a package when it names that file or a folder that holds it.
// With mage set, the magefile (build tag mage) is listed too.
func GoSources(root string, mage bool, pkgs ...string) ([]string, error) {
	args := []string{"list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}"}
	if mage {
		args = append(args, "-tags", "mage")
		pkgs = append(pkgs, "./magefiles")
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %v: %s", strings.Join(pkgs, " "), err, stderr.String())
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		rel, err := filepath.Rel(root, fields[0])
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue // the module cache: prefetched, covered by go.mod and go.sum
		}
		files = append(files, filepath.ToSlash(filepath.Join(rel, fields[1])))
	}
	return files, nil
}

// Feeds lists the repository files whose change must trigger run: its own file, its Containerfile, the
// build-args file, every prefetch input (for gomod: go.work, go.work.sum and every workspace module's go.mod and
// go.sum, since the workspace's build list spans them all), and the component's sources.
func Feeds(root string, r Run, cache SourceCache) ([]string, error) {
	rel := func(p string) string {
		p, _ = filepath.Rel(root, p)
		return filepath.ToSlash(p)
	}
	feeds := []string{rel(r.File), filepath.ToSlash(filepath.Join(r.Param("path-context"), r.Param("dockerfile"))), r.Param("build-args-file")}
	inputs, _ := r.Prefetch()
	for _, p := range inputs {
		switch p.Type {
		case "gomod":
			feeds = append(feeds, "go.work", "go.work.sum")
			mods, _ := WorkspaceModules(root)
			for _, m := range mods {
				feeds = append(feeds, m+"/go.mod", m+"/go.sum")
			}
		case "pip":
			for _, f := range p.RequirementsFiles {
				feeds = append(feeds, filepath.ToSlash(filepath.Join(p.Path, f)))
			}
		case "rpm":
			feeds = append(feeds, filepath.ToSlash(filepath.Join(p.Path, "rpms.lock.yaml")), filepath.ToSlash(filepath.Join(p.Path, "rpms.in.yaml")))
		}
	}
	component := r.Metadata.Labels["appstudio.openshift.io/component"]
	if v := catalog.VersionOfComponent(component); v != "" {
		// A version's catalog component is built from the catalog rendered from that version's template, and
		// from nothing of the other versions'.
		feeds = append(feeds, catalog.TemplatePath(v), catalog.RenderedDir(v)+"/"+CatalogPackage+"/catalog.yaml")
	}
	feeds = append(feeds, componentSources[component]...)
	if pkgs, ok := componentPrograms[component]; ok {
		// Every such stage runs `go tool mage`, which compiles the magefile: listed once per root.
		for _, key := range []string{magefileKey, component} {
			sources, cached := cache[key]
			if !cached {
				var err error
				if key == magefileKey {
					sources, err = GoSources(root, true)
				} else if len(pkgs) > 0 {
					sources, err = GoSources(root, false, pkgs...)
				}
				if err != nil {
					return feeds, err
				}
				cache[key] = sources
			}
			feeds = append(feeds, sources...)
		}
	}
	return feeds, nil
}

// WorkspaceModules are the module directories go.work uses, relative to root.
func WorkspaceModules(root string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	var mods []string
	for _, u := range wf.Use {
		mods = append(mods, filepath.ToSlash(filepath.Clean(u.Path)))
	}
	return mods, nil
}

var pathChanged = regexp.MustCompile(`"([^"]+)"\.pathChanged\(\)`)

// Triggers reports whether the on-cel-expression cel names path with "<path>".pathChanged() or a folder glob
// "<dir>/***".pathChanged() that holds it (Pipelines-as-Code's glob, where *** matches across folders).
func Triggers(cel, path string) bool {
	for _, m := range pathChanged.FindAllStringSubmatch(cel, -1) {
		pat := m[1]
		if pat == path {
			return true
		}
		if dir, ok := strings.CutSuffix(pat, "/***"); ok && strings.HasPrefix(path, dir+"/") {
			return true
		}
	}
	return false
}

// mustExist makes the sources table fail loudly when a file it names moves.
func missingSources(root string) []string {
	var out []string
	for c, files := range componentSources {
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(root, f)); err != nil {
				out = append(out, fmt.Sprintf("component %s: source %s does not exist (konflux.componentSources)", c, f))
			}
		}
	}
	return out
}
