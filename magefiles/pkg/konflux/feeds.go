package konflux

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
)

// CatalogPackage is the OLM package the catalogs hold (operator/manifests/package.yaml).
const CatalogPackage = "aws-efs-csi-driver-operator"

// componentSources are the repository paths a component's image is built from beyond what Feeds derives from
// the PipelineRun (Containerfile folder, build-args file, prefetch inputs, go.work): the sources its builder
// stage compiles or renders. The Go builder stages run `go tool mage build|bundle|catalog`, so magefiles/ feeds
// every Go-built component.
var componentSources = map[string][]string{
	"aws-efs-utils-base":                 {"efs-utils/layout.json", "requirements.txt.ocp"},
	"aws-efs-csi-driver":                 {"driver/cmd/aws-efs-csi-driver/main.go", "driver/VERSION", "magefiles/magefile.go"},
	"aws-efs-csi-driver-operator":        {"operator/cmd/aws-efs-csi-driver-operator/main.go", "operator/VERSION", "magefiles/magefile.go"},
	"aws-efs-csi-driver-operator-bundle": {"operator/manifests/aws-efs-csi-driver-operator.clusterserviceversion.yaml", "operator/VERSION", "driver/VERSION", "magefiles/magefile.go"},
}

// Feeds lists the repository files whose change must trigger run: its own file, its Containerfile, the
// build-args file, every prefetch input (for gomod: go.work, go.work.sum and every workspace module's go.mod and
// go.sum, since the workspace's build list spans them all), and the component's sources.
func Feeds(root string, r Run) []string {
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
	return append(feeds, componentSources[component]...)
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
