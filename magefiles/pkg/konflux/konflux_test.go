package konflux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/containerfile"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

func TestShippedPipelineRuns(t *testing.T) {
	root := workspacetest.Root(t)
	runs, err := Load(filepath.Join(root, Dir))
	if err != nil {
		t.Fatal(err)
	}
	if problems := Check(root, runs); len(problems) > 0 {
		t.Fatalf(".tekton:\n  %s", strings.Join(problems, "\n  "))
	}
	components, err := Components(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2*len(components) || len(components) != len(ImageComponents)+10 {
		t.Errorf("%d PipelineRuns, want a pull-request and a push run for each of %v (the four images and the catalogs of OpenShift 4.14 to 5.0)", len(runs), components)
	}
}

func TestBundleContainerfileLabelsMatchAnnotations(t *testing.T) {
	root := workspacetest.Root(t)
	f, err := containerfile.ParseFile(filepath.Join(root, "operator", "manifests", "bundle.Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	labels := containerfile.Labels(f.Final())
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
	root := workspacetest.Root(t)
	f, err := containerfile.ParseFile(filepath.Join(root, "images", "aws-efs-utils-base", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	want := f.DNFPackages()
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
	root := workspacetest.Root(t)
	orig, err := os.ReadFile(filepath.Join(root, Dir, "aws-efs-utils-base-push.yaml"))
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
		{"one platform", "        - linux/arm64\n", "", "build-platforms"},
		{"no versions file", "value: images/versions.conf\n", "value: images/other.conf\n", `build-args-file "images/other.conf": want images/versions.conf`},
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

// TestReadyNeedsAResolvedLock: an RPM lock with empty package lists (as committed until it is generated) or one
// that misses a package for an architecture is reported, and a complete one is not.
func TestReadyNeedsAResolvedLock(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rpms.in.yaml", "packages: [python3, stunnel]\narches: [x86_64, aarch64]\n")
	pkg := func(name string) string {
		return "      - {name: " + name + ", url: https://cdn.example.com/" + name + ".rpm, checksum: 'sha256:00ff', size: 1}\n"
	}
	for _, row := range []struct{ name, lock, want string }{
		{"empty lists", "lockfileVersion: 1\nlockfileVendor: redhat\narches:\n  - arch: x86_64\n    packages: []\n  - arch: aarch64\n    packages: []\n", "arch x86_64 resolves no python3, stunnel"},
		{"one arch short", "lockfileVersion: 1\nlockfileVendor: redhat\narches:\n  - arch: x86_64\n    packages:\n" + pkg("python3") + pkg("stunnel") + "  - arch: aarch64\n    packages:\n" + pkg("python3"), "arch aarch64 resolves no stunnel"},
		{"no checksum", "lockfileVersion: 1\nlockfileVendor: redhat\narches:\n  - arch: x86_64\n    packages:\n      - {name: python3, url: x}\n" + pkg("stunnel") + "  - arch: aarch64\n    packages:\n" + pkg("python3") + pkg("stunnel"), "arch x86_64 resolves no python3"},
		{"missing arch", "lockfileVersion: 1\nlockfileVendor: redhat\narches:\n  - arch: x86_64\n    packages:\n" + pkg("python3") + pkg("stunnel"), "no entry for arch aarch64"},
		{"complete", "lockfileVersion: 1\nlockfileVendor: redhat\narches:\n  - arch: x86_64\n    packages:\n" + pkg("python3") + pkg("stunnel") + "  - arch: aarch64\n    packages:\n" + pkg("python3") + pkg("stunnel"), ""},
	} {
		write("rpms.lock.yaml", row.lock)
		got := strings.Join(lockResolves(dir), "\n")
		if row.want == "" && got != "" || !strings.Contains(got, row.want) {
			t.Errorf("%s: problems %q, want %q", row.name, got, row.want)
		}
	}
}
