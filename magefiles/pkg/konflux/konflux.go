package konflux

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
)

// Platforms are the build-platforms every PipelineRun must list: Konflux's names for platform.Supported(),
// linux/amd64 and linux/arm64 (EFS runs on AWS only).
var Platforms = []string{"linux/x86_64", "linux/arm64"}

// lockArches are the RPM architectures of Platforms (rpms.in.yaml and rpms.lock.yaml).
var lockArches = []string{"x86_64", "aarch64"}

// BuildArgsFile is the build-args file every PipelineRun passes (the versions file).
const BuildArgsFile = "images/versions.conf"

// ImageComponents are the images Konflux builds besides the catalogs; Components adds one catalog component per
// OpenShift version. Each has a pull-request and a push PipelineRun.
var ImageComponents = []string{BaseComponent, DriverComponent, OperatorComponent, BundleComponent}

// Run is the part of a PipelineRun the checks read.
type Run struct {
	File       string
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
		Labels      map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Params []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"params"`
		PipelineRef struct {
			Name     string `json:"name"`
			Resolver string `json:"resolver"`
			Params   []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"params"`
		} `json:"pipelineRef"`
	} `json:"spec"`
}

// Dir is where Pipelines-as-Code reads PipelineRuns: .tekton/ at the repository root, and only there
// (openshift-pipelines/pipelines-as-code@c6397d3fda503f8cabfa5d050324ec0eb313bab7,
// docs/content/docs/guides/pipeline-resolution/_index.md: "all files ending with .yaml or .yml in the .tekton/
// directory and its subdirectories at the root of your repository").
const Dir = ".tekton"

// Param returns the named parameter as a string ("" when absent or not a string).
func (r Run) Param(name string) string {
	for _, p := range r.Spec.Params {
		if p.Name == name {
			var s string
			_ = json.Unmarshal(p.Value, &s)
			return s
		}
	}
	return ""
}

// ParamList returns the named parameter as a list of strings.
func (r Run) ParamList(name string) []string {
	for _, p := range r.Spec.Params {
		if p.Name == name {
			var l []string
			_ = json.Unmarshal(p.Value, &l)
			return l
		}
	}
	return nil
}

// Load parses the PipelineRuns among the *.yaml files of dir; files of other kinds (the shared Pipelines, an
// ImageDigestMirrorSet) are left out.
func Load(dir string) ([]Run, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no PipelineRun files (*.yaml)", dir)
	}
	sort.Strings(files)
	var runs []Run
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r Run
		if err := yaml.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		r.File = f
		if r.Kind != "PipelineRun" {
			continue
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Prefetch returns the entries of the prefetch-input parameter.
func (r Run) Prefetch() ([]Prefetch, error) {
	var inputs []Prefetch
	err := json.Unmarshal([]byte(r.Param("prefetch-input")), &inputs)
	return inputs, err
}

// Facts of hermeto, the prefetcher of Konflux's prefetch-dependencies task, that the checks rely on.
const (
	// hermetoGoWork: fetch_gomod_source runs `go env GOWORK` in the gomod path (which must hold a go.mod) and,
	// when it names a go.work, lists and downloads the packages of every workspace module.
	hermetoGoWork = "hermetoproject/hermeto@fa5640061eb6876d5fbe1e3c1f5b799f98c10604 hermeto/core/package_managers/gomod/main.py fetch_gomod_source, go.py _get_go_work_path"
	// hermetoPip: PipPackageInput has requirements_files, requirements_build_files (default requirements-build.txt
	// when present) and allow_binary (default false: sdists only).
	hermetoPip = "hermetoproject/hermeto@fa5640061eb6876d5fbe1e3c1f5b799f98c10604 hermeto/core/models/input.py PipPackageInput, hermeto/core/package_managers/python/pip/main.py"
)

// Prefetch is one entry of the prefetch-input parameter.
type Prefetch struct {
	Type                   string    `json:"type"`
	Path                   string    `json:"path"`
	RequirementsFiles      []string  `json:"requirements_files,omitempty"`
	RequirementsBuildFiles *[]string `json:"requirements_build_files,omitempty"`
	AllowBinary            bool      `json:"allow_binary,omitempty"`
}

// Check returns every problem of runs against the repository at root; none means all is well.
func Check(root string, runs []Run) []string {
	var problems []string
	pipelines, err := LoadPipelines(filepath.Join(root, Dir))
	if err != nil {
		problems = append(problems, err.Error())
	}
	seen := map[string]bool{}
	sources := SourceCache{}
	names := map[string]string{}
	for _, r := range runs {
		where := filepath.Base(r.File)
		add := func(format string, args ...any) { problems = append(problems, where+": "+fmt.Sprintf(format, args...)) }
		if r.APIVersion != "tekton.dev/v1" || r.Kind != "PipelineRun" {
			add("apiVersion/kind %s/%s: want tekton.dev/v1 PipelineRun", r.APIVersion, r.Kind)
		}
		if prev, dup := names[r.Metadata.Name]; dup {
			add("metadata.name %s is also used by %s", r.Metadata.Name, prev)
		}
		names[r.Metadata.Name] = where
		component := r.Metadata.Labels["appstudio.openshift.io/component"]
		cel := r.Metadata.Annotations["pipelinesascode.tekton.dev/on-cel-expression"]
		event := ""
		switch {
		case strings.Contains(cel, `event == "pull_request"`):
			event = "pull-request"
		case strings.Contains(cel, `event == "push"`):
			event = "push"
		default:
			add("on-cel-expression %q: want event == \"pull_request\" or event == \"push\"", cel)
		}
		seen[component+"/"+event] = true
		if want := component + "-" + event + ".yaml"; where != want {
			add("file name: want %s for component %q on %s", want, component, event)
		}
		problems = append(problems, checkBuild(root, where, r)...)
		problems = append(problems, checkPipeline(root, where, r, pipelines)...)
		feeds, err := Feeds(root, r, sources)
		if err != nil {
			add("what feeds component %s: %v", component, err)
		}
		for _, p := range feeds {
			if !Triggers(cel, p) {
				add("on-cel-expression does not fire on %s, which feeds component %s: add \"%s\".pathChanged() (or a folder/*** that holds it)", p, component, p)
			}
		}
	}
	problems = append(problems, checkBaseNudge(root, runs)...)
	problems = append(problems, CheckLabels(root)...)
	problems = append(problems, missingSources(root)...)
	problems = append(problems, checkImageNudges(root, runs)...)
	problems = append(problems, checkCatalogRuns(root, runs)...)
	problems = append(problems, checkDigestsWhereRequired(root, runs)...)
	components, err := Components(root)
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, c := range components {
		for _, e := range []string{"pull-request", "push"} {
			if !seen[c+"/"+e] {
				problems = append(problems, fmt.Sprintf("component %s has no %s PipelineRun", c, e))
			}
		}
	}
	return problems
}

func checkBuild(root, where string, r Run) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, where+": "+fmt.Sprintf(format, args...)) }
	ctx := r.Param("path-context")
	if ctx == "" {
		ctx = "."
	}
	if info, err := os.Stat(filepath.Join(root, ctx)); err != nil || !info.IsDir() {
		add("path-context %q is not a directory of the repository", ctx)
	}
	df := r.Param("dockerfile")
	if _, err := os.Stat(filepath.Join(root, ctx, df)); df == "" || err != nil {
		add("dockerfile %q does not exist in the context %q", df, ctx)
	}
	if r.Param("build-args-file") != BuildArgsFile {
		add("build-args-file %q: want %s, where every version-like value comes from", r.Param("build-args-file"), BuildArgsFile)
	}
	if r.Param("hermetic") != "true" {
		add("hermetic is %q: want \"true\" (builds use prefetched inputs only)", r.Param("hermetic"))
	}
	if got := r.ParamList("build-platforms"); strings.Join(got, ",") != strings.Join(Platforms, ",") {
		add("build-platforms %v: want %v", got, Platforms)
	}
	if !regexp.MustCompile(`^quay\.io/redhat-user-workloads/[a-z0-9-]+/` + regexp.QuoteMeta(r.Metadata.Labels["appstudio.openshift.io/component"]) + `:`).MatchString(r.Param("output-image")) {
		add("output-image %q: want quay.io/redhat-user-workloads/<tenant>/<component>:<tag>", r.Param("output-image"))
	}
	if r.Param("rewrite-timestamp") != "true" {
		add("rewrite-timestamp is %q: want \"true\" (layer file times clamped to SOURCE_DATE_EPOCH, the commit time)", r.Param("rewrite-timestamp"))
	}
	if !slices.Contains(r.ParamList("build-args"), "RELEASE={{revision}}") {
		add("build-args %v: want RELEASE={{revision}} (the release label, which no build task sets)", r.ParamList("build-args"))
	}
	var inputs []Prefetch
	var err error
	if catalog.VersionOfComponent(r.Metadata.Labels["appstudio.openshift.io/component"]) != "" && r.Param("prefetch-input") == "" {
		// A catalog compiles nothing: no prefetch, fbc-builder's default
		// (konflux-ci/build-definitions@6904ca2 pipelines/fbc-builder/fbc-builder.yaml, prefetch-input "").
	} else if inputs, err = r.Prefetch(); err != nil || len(inputs) == 0 {
		add("prefetch-input %q: want a JSON list of {type, path}: %v", r.Param("prefetch-input"), err)
	}
	gomod := 0
	for _, p := range inputs {
		if p.Type == "gomod" {
			gomod++
		}
		problems = append(problems, checkPrefetch(root, where, p)...)
	}
	if gomod > 1 {
		add("prefetch-input has %d gomod entries: want one; hermeto resolves the whole go.work from any module of it (%s)", gomod, hermetoGoWork)
	}
	return problems
}

func checkPrefetch(root, where string, p Prefetch) []string {
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, where+": prefetch "+p.Type+" "+p.Path+": "+fmt.Sprintf(format, args...))
	}
	dir := filepath.Join(root, p.Path)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		add("the path is not a directory of the repository")
		return problems
	}
	need := func(name string) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			add("missing %s", name)
		}
	}
	switch p.Type {
	case "gomod":
		need("go.mod")
		need("go.sum")
		if mods, err := WorkspaceModules(root); err != nil {
			add("%v", err)
		} else if !slices.Contains(mods, filepath.ToSlash(filepath.Clean(p.Path))) {
			add("not a module of go.work %v: hermeto finds go.work with `go env GOWORK` from this path (%s)", mods, hermetoGoWork)
		}
	case "pip":
		if len(p.RequirementsFiles) == 0 {
			add("no requirements_files")
		}
		for _, f := range p.RequirementsFiles {
			need(f)
		}
		if p.RequirementsBuildFiles == nil || len(*p.RequirementsBuildFiles) > 0 {
			add("requirements_build_files: want [] (hermeto would otherwise look for requirements-build.txt): the sdist builds with RHEL's python3-setuptools and python3-wheel RPMs (rpm lock) and pip --no-build-isolation (%s)", hermetoPip)
		}
		if p.AllowBinary {
			add("allow_binary: want false: the pinned hashes are sdists' (%s)", hermetoPip)
		}
	case "rpm":
		need("rpms.in.yaml")
		need("rpms.lock.yaml")
		if err := checkLock(filepath.Join(dir, "rpms.lock.yaml")); err != nil {
			add("%v", err)
		}
	default:
		add("unknown type: want gomod, pip or rpm")
	}
	return problems
}

// checkLock parses an RPM lock file and requires an entry for every architecture the images are built for.
func checkLock(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var lock struct {
		LockfileVersion int    `json:"lockfileVersion"`
		LockfileVendor  string `json:"lockfileVendor"`
		Arches          []struct {
			Arch     string `json:"arch"`
			Packages []struct {
				URL string `json:"url"`
			} `json:"packages"`
		} `json:"arches"`
	}
	if err := yaml.Unmarshal(data, &lock); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// hermeto's RedhatRpmsLock (hermetoproject/hermeto@fa5640061eb6876d5fbe1e3c1f5b799f98c10604,
	// hermeto/core/package_managers/rpm/redhat.py): lockfileVersion must be 1, lockfileVendor "redhat", arches a
	// list of {arch, packages, source, module_metadata}; each package needs a url (repoid, checksum, size optional).
	if lock.LockfileVersion != 1 {
		return fmt.Errorf("%s: lockfileVersion %d: want 1", path, lock.LockfileVersion)
	}
	if lock.LockfileVendor != "redhat" {
		return fmt.Errorf("%s: lockfileVendor %q: want redhat", path, lock.LockfileVendor)
	}
	have := map[string]bool{}
	for _, a := range lock.Arches {
		have[a.Arch] = true
		for i, p := range a.Packages {
			if p.URL == "" {
				return fmt.Errorf("%s: arch %s package %d has no url", path, a.Arch, i)
			}
		}
	}
	for _, a := range lockArches {
		if !have[a] {
			return fmt.Errorf("%s: no entry for arch %s", path, a)
		}
	}
	return nil
}
