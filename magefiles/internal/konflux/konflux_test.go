package konflux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/internal/bundle"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestShippedPipelineRuns(t *testing.T) {
	root := repoRoot(t)
	runs, err := Load(filepath.Join(root, "ci", "tekton"))
	if err != nil {
		t.Fatal(err)
	}
	if problems := Check(root, runs); len(problems) > 0 {
		t.Fatalf("ci/tekton:\n  %s", strings.Join(problems, "\n  "))
	}
	if len(runs) != 2*len(Components) {
		t.Errorf("%d PipelineRuns, want a pull-request and a push run for each of %v", len(runs), Components)
	}
}

func TestBundleContainerfileLabelsMatchAnnotations(t *testing.T) {
	root := repoRoot(t)
	labels, err := Labels(filepath.Join(root, "operator", "manifests", "bundle.Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ann, err := bundle.ReadAnnotations(filepath.Join(root, "operator", "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	ann["com.redhat.delivery.operator.bundle"] = "true"
	for k, v := range ann {
		if labels[k] != v {
			t.Errorf("bundle.Containerfile LABEL %s=%q, metadata/annotations.yaml says %q", k, labels[k], v)
		}
	}
	for k := range labels {
		if strings.HasPrefix(k, "operators.operatorframework.io.") {
			if _, ok := ann[k]; !ok {
				t.Errorf("bundle.Containerfile LABEL %s is not in metadata/annotations.yaml", k)
			}
		}
	}
}

func TestRPMInputMatchesContainerfile(t *testing.T) {
	root := repoRoot(t)
	want, err := DNFPackages(filepath.Join(root, "images", "aws-efs-utils-base", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := LockInputPackages(filepath.Join(root, "ci", "prefetch", "aws-efs-utils-base", "rpms.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rpms.in.yaml packages %v, the Containerfile installs %v", got, want)
	}
}

// TestCheckFindsProblems breaks a copy of one PipelineRun in each way the checks look for.
func TestCheckFindsProblems(t *testing.T) {
	root := repoRoot(t)
	orig, err := os.ReadFile(filepath.Join(root, "ci", "tekton", "aws-efs-utils-base-push.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"missing Containerfile", "value: images/aws-efs-utils-base/Containerfile", "value: images/nope/Containerfile", `dockerfile "images/nope/Containerfile" does not exist`},
		{"missing context", "value: .\n", "value: nowhere\n", `path-context "nowhere"`},
		{"missing prefetch dir", `"path": "ci/prefetch/aws-efs-utils-base"`, `"path": "ci/prefetch/gone"`, "prefetch rpm ci/prefetch/gone: the path is not a directory"},
		{"missing requirements", `"requirements_files": ["requirements.txt.ocp"]`, `"requirements_files": ["requirements.txt"]`, "missing requirements.txt"},
		{"unknown prefetch type", `"type": "rpm"`, `"type": "cargo"`, "unknown type"},
		{"not hermetic", "value: \"true\"\n    - name: prefetch-input", "value: \"false\"\n    - name: prefetch-input", `hermetic is "false"`},
		{"three platforms", "        - linux/s390x\n", "", "build-platforms"},
		{"bad prefetch JSON", `value: '[{"type"`, `value: '[{type`, "prefetch-input"},
		{"yaml syntax", "kind: PipelineRun", "kind: [PipelineRun", "aws-efs-utils-base-push.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(orig), tc.old) {
				t.Fatalf("the PipelineRun no longer contains %q", tc.old)
			}
			dir := t.TempDir()
			broken := strings.Replace(string(orig), tc.old, tc.new, 1)
			if err := os.WriteFile(filepath.Join(dir, "aws-efs-utils-base-push.yaml"), []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
			runs, err := Load(dir)
			var msg string
			if err != nil {
				msg = err.Error()
			} else {
				msg = strings.Join(Check(root, runs), "\n")
			}
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("problems:\n%s\nwant one containing %q", msg, tc.want)
			}
		})
	}
}
