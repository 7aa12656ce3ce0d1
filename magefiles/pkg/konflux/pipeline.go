package konflux

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Pipeline is the part of a Tekton Pipeline in .tekton/ the checks read.
type Pipeline struct {
	File     string
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Tasks   []PipelineTask `json:"tasks"`
		Finally []PipelineTask `json:"finally"`
	} `json:"spec"`
}

// PipelineTask is one task of a Pipeline.
type PipelineTask struct {
	Name    string `json:"name"`
	TaskRef *struct {
		Name     string `json:"name"`
		Resolver string `json:"resolver"`
		Params   []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"params"`
	} `json:"taskRef"`
	Params []struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	} `json:"params"`
}

// Bundle is the bundles-resolver reference of the task ("" when the task is not taken from a bundle).
func (t PipelineTask) Bundle() string {
	if t.TaskRef == nil || t.TaskRef.Resolver != "bundles" {
		return ""
	}
	for _, p := range t.TaskRef.Params {
		if p.Name == "bundle" {
			return p.Value
		}
	}
	return ""
}

// Param is the task parameter name as a string ("" when absent or not a string).
func (t PipelineTask) Param(name string) string {
	for _, p := range t.Params {
		if s, ok := p.Value.(string); ok && p.Name == name {
			return s
		}
	}
	return ""
}

// digestRef is a reference pinned by digest: what the bundles resolver needs to be reproducible.
var digestRef = regexp.MustCompile(`^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+(:[A-Za-z0-9._-]+)?@sha256:[a-f0-9]{64}$`)

// LoadPipelines parses the Pipelines among the *.yaml files of dir, by name.
func LoadPipelines(dir string) (map[string]Pipeline, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := map[string]Pipeline{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var p Pipeline
		if err := yaml.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if p.Kind == "Pipeline" {
			p.File = f
			out[p.Metadata.Name] = p
		}
	}
	return out, nil
}

// checkPipeline: the run's pipeline is pinned by digest, either a bundles-resolver pipelineRef ending in
// @sha256:<digest>, or (Pipelines-as-Code embeds a Pipeline of .tekton/ that pipelineRef names) a Pipeline of
// .tekton/ whose every task comes from a bundle pinned by digest; the run fires when that file changes; and its
// image build task gets the reproducibility parameters of Konflux's buildah tasks (SOURCE_DATE_EPOCH,
// REWRITE_TIMESTAMP: konflux-ci/build-definitions@6904ca204e66889a2dc35ad7d860d56632fd17be,
// pipelines/docker-build-multi-platform-oci-ta/README.md, buildah-remote-oci-ta 0.10 parameters).
func checkPipeline(root, where string, r Run, pipelines map[string]Pipeline) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, where+": "+fmt.Sprintf(format, args...)) }
	ref := r.Spec.PipelineRef
	if ref.Resolver == "bundles" {
		for _, p := range ref.Params {
			if p.Name == "bundle" && !digestRef.MatchString(p.Value) {
				add("pipelineRef bundle %q: want <repository>[:tag]@sha256:<digest>, not a floating tag", p.Value)
			}
		}
		return problems
	}
	p, ok := pipelines[ref.Name]
	if ref.Name == "" || !ok {
		return append(problems, fmt.Sprintf("%s: pipelineRef %+v: want the name of a Pipeline in %s/ or a bundles resolver pinned by digest", where, ref, Dir))
	}
	rel, _ := filepath.Rel(root, p.File)
	rel = filepath.ToSlash(rel)
	if !Triggers(r.Metadata.Annotations["pipelinesascode.tekton.dev/on-cel-expression"], rel) {
		add("on-cel-expression does not fire on %s, the Pipeline it runs", rel)
	}
	build := false
	for _, t := range append(append([]PipelineTask(nil), p.Spec.Tasks...), p.Spec.Finally...) {
		b := t.Bundle()
		if !digestRef.MatchString(b) {
			add("%s task %s: bundle %q: want a task bundle pinned by digest (<repository>:<version>@sha256:<digest>)", rel, t.Name, b)
		}
		if strings.Contains(b, "/task-buildah") {
			build = true
			if t.Param("SOURCE_DATE_EPOCH") == "" || t.Param("REWRITE_TIMESTAMP") != "$(params.rewrite-timestamp)" {
				add("%s task %s: SOURCE_DATE_EPOCH %q, REWRITE_TIMESTAMP %q: want the commit time and $(params.rewrite-timestamp)", rel, t.Name, t.Param("SOURCE_DATE_EPOCH"), t.Param("REWRITE_TIMESTAMP"))
			}
		}
	}
	if !build {
		add("%s: no buildah task builds the image", rel)
	}
	return problems
}
