package konflux

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/containerfile"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// Our components besides the base (BaseComponent) and the per-version catalogs.
const (
	DriverComponent   = "aws-efs-csi-driver"
	OperatorComponent = "aws-efs-csi-driver-operator"
	BundleComponent   = "aws-efs-csi-driver-operator-bundle"
)

// Files of the bundle that name the driver and operator images by digest: both are nudged by those components.
const (
	CSVFile             = "operator/manifests/aws-efs-csi-driver-operator.clusterserviceversion.yaml"
	ImageReferencesFile = "operator/manifests/image-references"
	// CatalogContainerfile builds every per-version catalog component.
	CatalogContainerfile = catalog.FragmentsDir + "/Containerfile"
)

// Build-args a catalog run passes to CatalogContainerfile: its OpenShift version and that version's opm base.
const (
	CatalogVersionArg = "CATALOG_OPENSHIFT_VERSION"
	CatalogBaseArg    = "OPERATOR_REGISTRY_IMAGE"
)

// Components are every component Konflux builds from this repository: ImageComponents and one catalog component
// per OpenShift version with a catalog template (catalog.Versions).
func Components(root string) ([]string, error) {
	versions, err := catalog.Versions(root)
	if err != nil {
		return append([]string(nil), ImageComponents...), err
	}
	out := append([]string(nil), ImageComponents...)
	for _, v := range versions {
		out = append(out, catalog.ComponentFor(v))
	}
	return out, nil
}

// buildArgs is the run's build-args as a map.
func buildArgs(r Run) map[string]string {
	out := map[string]string{}
	for _, a := range r.ParamList("build-args") {
		if k, v, ok := strings.Cut(a, "="); ok {
			out[k] = v
		}
	}
	return out
}

// checkCatalogRuns: every per-version catalog run builds CatalogContainerfile with the shared catalog Pipeline,
// passes its own OpenShift version and that version's opm base (catalog.OPMBase) as build-args, and the
// Containerfile so built is FROM that base and copies that version's rendered catalog, and nothing else, into
// /configs (what Konflux's fbc-inject-lifecycle reads, resolving ARGs from the build-args:
// konflux-ci/build-definitions@6904ca2 pipelines/fbc-builder/README.md, fbc-inject-lifecycle BUILD_ARGS).
func checkCatalogRuns(root string, runs []Run) []string {
	var problems []string
	data, err := os.ReadFile(filepath.Join(root, CatalogContainerfile))
	if err != nil {
		return []string{err.Error()}
	}
	vf, err := versions.Load(root)
	if err != nil {
		return []string{err.Error()}
	}
	for _, r := range runs {
		v := catalog.VersionOfComponent(r.Metadata.Labels["appstudio.openshift.io/component"])
		if v == "" {
			continue
		}
		where := filepath.Base(r.File)
		add := func(format string, args ...any) { problems = append(problems, where+": "+fmt.Sprintf(format, args...)) }
		if _, err := os.Stat(filepath.Join(root, catalog.TemplatePath(v))); err != nil {
			add("OpenShift %s has no %s", v, catalog.TemplatePath(v))
		}
		if r.Param("dockerfile") != CatalogContainerfile || r.Param("path-context") != "." {
			add("dockerfile %q in context %q: want %s in . (one Containerfile for every version)", r.Param("dockerfile"), r.Param("path-context"), CatalogContainerfile)
		}
		if r.Spec.PipelineRef.Name != "aws-efs-csi-catalog-build" {
			add("pipelineRef %q: want aws-efs-csi-catalog-build (Konflux's fbc-builder tasks)", r.Spec.PipelineRef.Name)
		}
		args := buildArgs(r)
		base, err := catalog.OPMBase(vf.Get(CatalogBaseArg), v)
		if err != nil {
			add("%v", err)
			continue
		}
		if args[CatalogVersionArg] != v || args[CatalogBaseArg] != base {
			add("build-args %v: want %s=%s and %s=%s (OpenShift %s's opm base)", r.ParamList("build-args"), CatalogVersionArg, v, CatalogBaseArg, base, v)
		}
		f, err := containerfile.ParseWithArgs(string(data), args)
		if err != nil {
			add("%s: %v", CatalogContainerfile, err)
			continue
		}
		if got := f.Final().BaseName; got != base {
			add("%s with these build-args is FROM %s: want %s", CatalogContainerfile, got, base)
		}
		var sources []string
		for _, c := range containerfile.Commands[*instructions.CopyCommand](f.Final()) {
			if c.DestPath == catalog.ConfigsDir || c.DestPath == catalog.ConfigsDir+"/" {
				sources = append(sources, c.SourcePaths...)
			}
		}
		if !slices.Equal(sources, []string{catalog.RenderedDir(v)}) {
			add("%s with these build-args copies %v to %s: want only %s, the catalog rendered for OpenShift %s", CatalogContainerfile, sources, catalog.ConfigsDir, catalog.RenderedDir(v), v)
		}
	}
	return problems
}

// checkImageNudges: the nudges of our components reach every file that names them by digest: the driver and the
// operator name the CSV and image-references (which ART reads and a test keeps equal to the CSV), the bundle every
// catalog template; and each of those files names the component's push repository in the form the nudge
// rewrites (NudgeTarget, build-service@ccde63a renovate_util.go).
func checkImageNudges(root string, runs []Run) []string {
	var problems []string
	versions, err := catalog.Versions(root)
	if err != nil {
		return []string{err.Error()}
	}
	var templates []string
	for _, v := range versions {
		templates = append(templates, catalog.TemplatePath(v))
	}
	for component, files := range map[string][]string{
		DriverComponent:   {CSVFile, ImageReferencesFile},
		OperatorComponent: {CSVFile, ImageReferencesFile},
		BundleComponent:   templates,
	} {
		run, repo := PushRepo(runs, component)
		if repo == "" {
			problems = append(problems, "no push PipelineRun of "+component)
			continue
		}
		for _, file := range files {
			matched := false
			for _, re := range NudgeFiles(run) {
				matched = matched || re.MatchString(file)
			}
			if !matched {
				problems = append(problems, fmt.Sprintf("%s: %s %q does not match %s, so the nudges of %s never reach it", filepath.Base(run.File), NudgeFilesAnnotation, run.Metadata.Annotations[NudgeFilesAnnotation], file, component))
			}
			data, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if !NudgeTarget(repo).Match(data) {
				problems = append(problems, fmt.Sprintf("%s: no %s@sha256:<digest>: the nudges of %s rewrite only that form", file, repo, component))
			}
		}
	}
	return problems
}

// tagged finds an image reference by tag with no digest: <registry>/<path>:<tag> not followed by @sha256:.
var tagged = regexp.MustCompile(`\b[a-z0-9.-]+\.[a-z]{2,}(:[0-9]+)?/[a-z0-9._/-]+:[A-Za-z0-9_][A-Za-z0-9._-]*(@sha256:[a-f0-9]{64})?`)

// checkDigestsWhereRequired: no reference to one of our components (the repositories their push runs write) is a
// tag without a digest in the files a build or a nudge reads: the versions file, the Containerfiles, the CSV and
// image-references, the catalog templates. A tag such as :latest would build on whatever was pushed last, and no
// nudge ever rewrites it.
func checkDigestsWhereRequired(root string, runs []Run) []string {
	components, _ := Components(root)
	var repos []string
	for _, c := range components {
		if _, repo := PushRepo(runs, c); repo != "" {
			repos = append(repos, repo)
		}
	}
	files := append([]string{BuildArgsFile, CSVFile, ImageReferencesFile}, keys(LabelledImages)...)
	versions, _ := catalog.Versions(root)
	for _, v := range versions {
		files = append(files, catalog.TemplatePath(v))
	}
	var problems []string
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, m := range tagged.FindAllStringSubmatch(line, -1) {
				ref := m[0]
				if m[2] != "" {
					continue
				}
				ours := false
				for _, repo := range repos {
					ours = ours || strings.HasPrefix(ref, repo+":")
				}
				if ours || strings.HasSuffix(ref, ":latest") {
					problems = append(problems, fmt.Sprintf("%s: %s: want <repository>@sha256:<digest> (a tag is never nudged and never reproducible)", file, ref))
				}
			}
		}
	}
	return problems
}
