package konflux

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Platforms are the build-platforms every PipelineRun must list: Konflux's names for platform.Supported(),
// linux/amd64 and linux/arm64 (EFS runs on AWS only).
var Platforms = []string{"linux/x86_64", "linux/arm64"}

// lockArches are the RPM architectures of Platforms (rpms.in.yaml and rpms.lock.yaml).
var lockArches = []string{"x86_64", "aarch64"}

// BuildArgsFile is the build-args file every PipelineRun passes (the versions file).
const BuildArgsFile = "images/versions.conf"

// Components are the images Konflux builds, each with a pull-request and a push PipelineRun.
var Components = []string{"aws-efs-utils-base", "aws-efs-csi-driver", "aws-efs-csi-driver-operator", "aws-efs-csi-driver-operator-bundle", "aws-efs-csi-driver-operator-catalog"}

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
	} `json:"spec"`
}

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

// Load parses every *.yaml file of dir as a PipelineRun.
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
		runs = append(runs, r)
	}
	return runs, nil
}

// Prefetch is one entry of the prefetch-input parameter.
type Prefetch struct {
	Type              string   `json:"type"`
	Path              string   `json:"path"`
	RequirementsFiles []string `json:"requirements_files,omitempty"`
	AllowBinary       string   `json:"allow_binary,omitempty"`
}

// Check returns every problem of runs against the repository at root; none means all is well.
func Check(root string, runs []Run) []string {
	var problems []string
	seen := map[string]bool{}
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
		if !strings.Contains(cel, `"ci/tekton/`+where+`".pathChanged()`) {
			add("on-cel-expression does not trigger on changes to its own file ci/tekton/%s", where)
		}
		problems = append(problems, checkBuild(root, where, r)...)
	}
	for _, c := range Components {
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
	var inputs []Prefetch
	if err := json.Unmarshal([]byte(r.Param("prefetch-input")), &inputs); err != nil || len(inputs) == 0 {
		add("prefetch-input %q: want a JSON list of {type, path}: %v", r.Param("prefetch-input"), err)
	}
	for _, p := range inputs {
		problems = append(problems, checkPrefetch(root, where, p)...)
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
	case "pip":
		if len(p.RequirementsFiles) == 0 {
			add("no requirements_files")
		}
		for _, f := range p.RequirementsFiles {
			need(f)
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
		LockfileVersion int `json:"lockfileVersion"`
		Arches          []struct {
			Arch string `json:"arch"`
		} `json:"arches"`
	}
	if err := yaml.Unmarshal(data, &lock); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if lock.LockfileVersion != 1 {
		return fmt.Errorf("%s: lockfileVersion %d: want 1", path, lock.LockfileVersion)
	}
	have := map[string]bool{}
	for _, a := range lock.Arches {
		have[a.Arch] = true
	}
	for _, a := range lockArches {
		if !have[a] {
			return fmt.Errorf("%s: no entry for arch %s", path, a)
		}
	}
	return nil
}
