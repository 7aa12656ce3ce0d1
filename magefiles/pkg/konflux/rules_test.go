package konflux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

// TestRulesCatchBreakage breaks a copy of .tekton/ in each way the new rules look for and expects the problem.
func TestRulesCatchBreakage(t *testing.T) {
	root := workspacetest.Root(t)
	for _, tc := range []struct{ name, file, old, new, want string }{
		{"floating task bundle", "image-build-pipeline.yaml", "task-init:0.4.2@sha256:421003a5c077ecb820460e71637125ec9093d2101c749a32ede28e190283e9db", "task-init:0.4", "task init: bundle \"quay.io/konflux-ci/tekton-catalog/task-init:0.4\""},
		{"floating pipeline bundle", "aws-efs-csi-driver-push.yaml", "  pipelineRef:\n    name: aws-efs-csi-image-build\n", "  pipelineRef:\n    resolver: bundles\n    params:\n      - {name: bundle, value: quay.io/konflux-ci/tekton-catalog/pipeline-docker-build-multi-platform-oci-ta:devel}\n", "not a floating tag"},
		{"unknown pipeline", "aws-efs-csi-driver-push.yaml", "name: aws-efs-csi-image-build\n", "name: nowhere\n", "want the name of a Pipeline"},
		{"no timestamp clamp", "image-build-pipeline.yaml", `{name: REWRITE_TIMESTAMP, value: "$(params.rewrite-timestamp)"}`, `{name: REWRITE_TIMESTAMP, value: "false"}`, "REWRITE_TIMESTAMP"},
		{"run without rewrite-timestamp", "aws-efs-csi-driver-push.yaml", "    - name: rewrite-timestamp\n      value: \"true\"\n", "", `rewrite-timestamp is ""`},
		{"no release build-arg", "aws-efs-csi-driver-push.yaml", "        - RELEASE={{revision}}\n", "        - OTHER=1\n", "RELEASE={{revision}}"},
		{"trigger misses go.work.sum", "aws-efs-csi-driver-push.yaml", `"go.work.sum".pathChanged() || `, "", "does not fire on go.work.sum"},
		{"trigger misses another module's go.mod", "aws-efs-csi-driver-push.yaml", `"operator/go.mod".pathChanged() || `, "", "does not fire on operator/go.mod"},
		{"trigger misses magefiles", "aws-efs-csi-driver-operator-push.yaml", `"magefiles/***".pathChanged() || `, "", "does not fire on magefiles/magefile.go"},
		{"trigger misses a package the program imports from another module", "aws-efs-csi-driver-operator-push.yaml", `"driver/pkg/version/***".pathChanged() || `, "", "does not fire on driver/pkg/version/version.go"},
		{"trigger misses the program's sources", "aws-efs-csi-driver-push.yaml", `"driver/***".pathChanged() || `, "", "does not fire on driver/cmd/aws-efs-csi-driver/"},
		{"trigger misses the pipeline", "aws-efs-utils-base-push.yaml", `".tekton/image-build-pipeline.yaml".pathChanged() || `, "", "does not fire on .tekton/image-build-pipeline.yaml"},
		{"trigger misses requirements", "aws-efs-utils-base-pull-request.yaml", `"requirements.txt.ocp".pathChanged() || `, "", "does not fire on requirements.txt.ocp"},
		{"three gomod entries", "aws-efs-csi-driver-push.yaml", `[{"type": "gomod", "path": "driver"}]`, `[{"type": "gomod", "path": "driver"}, {"type": "gomod", "path": "operator"}, {"type": "gomod", "path": "magefiles"}]`, "3 gomod entries"},
		{"gomod outside go.work", "aws-efs-csi-driver-push.yaml", `{"type": "gomod", "path": "driver"}`, `{"type": "gomod", "path": "efs-utils"}`, "missing go.mod"},
		{"pip build requirements unsaid", "aws-efs-utils-base-push.yaml", `, "requirements_build_files": []`, "", "requirements_build_files: want []"},
		{"pip binaries", "aws-efs-utils-base-push.yaml", `"requirements_build_files": []`, `"requirements_build_files": [], "allow_binary": true`, "allow_binary: want false"},
		{"catalog of another version", "aws-efs-csi-driver-operator-catalog-v4-18-push.yaml", "CATALOG_OPENSHIFT_VERSION=4.18", "CATALOG_OPENSHIFT_VERSION=4.17", "copies [images/aws-efs-csi-driver-operator-catalog/v4.17/catalog] to /configs: want only images/aws-efs-csi-driver-operator-catalog/v4.18/catalog"},
		{"catalog on another opm", "aws-efs-csi-driver-operator-catalog-v4-18-push.yaml", "ose-operator-registry-rhel9:v4.18", "ose-operator-registry-rhel9:v5.0", "want CATALOG_OPENSHIFT_VERSION=4.18 and OPERATOR_REGISTRY_IMAGE=registry.redhat.io/openshift4/ose-operator-registry-rhel9:v4.18"},
		{"4.14 catalog on a RHEL 9 opm", "aws-efs-csi-driver-operator-catalog-v4-14-pull-request.yaml", "ose-operator-registry:v4.14", "ose-operator-registry-rhel9:v4.14", "OPERATOR_REGISTRY_IMAGE=registry.redhat.io/openshift4/ose-operator-registry:v4.14"},
		{"catalog trigger misses its template", "aws-efs-csi-driver-operator-catalog-v4-18-push.yaml", `"images/aws-efs-csi-driver-operator-catalog/v4.18/***".pathChanged() || `, "", "does not fire on images/aws-efs-csi-driver-operator-catalog/v4.18/catalog-template.yaml"},
		{"catalog without push run", "aws-efs-csi-driver-operator-catalog-v5-0-push.yaml", "kind: PipelineRun", "kind: ConfigMap", "component aws-efs-csi-driver-operator-catalog-v5-0 has no push PipelineRun"},
		{"bundle nudge misses the templates", "aws-efs-csi-driver-operator-bundle-push.yaml", `build-nudge-files: images/aws-efs-csi-driver-operator-catalog/v[0-9.]+/catalog-template\.yaml`, "build-nudge-files: images/versions.conf", "does not match images/aws-efs-csi-driver-operator-catalog/v4.14/catalog-template.yaml, so the nudges of aws-efs-csi-driver-operator-bundle never reach it"},
		{"driver nudge misses image-references", "aws-efs-csi-driver-push.yaml", ", operator/manifests/image-references", "", "does not match operator/manifests/image-references, so the nudges of aws-efs-csi-driver never reach it"},
		{"nudge misses the driver", "aws-efs-utils-base-push.yaml", "build-nudge-files: images/aws-efs-csi-driver/Containerfile", "build-nudge-files: images/versions.conf", "its nudges never reach the driver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files, _ := filepath.Glob(filepath.Join(root, Dir, "*.yaml"))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if filepath.Base(f) == tc.file {
					if !strings.Contains(string(data), tc.old) {
						t.Fatalf("%s no longer contains %q", tc.file, tc.old)
					}
					data = []byte(strings.Replace(string(data), tc.old, tc.new, 1))
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The checks read .tekton/ of a root: give them one whose other files are the repository's.
			fake := t.TempDir()
			entries, err := os.ReadDir(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() == Dir || e.Name() == ".git" || e.Name() == "_output" {
					continue
				}
				if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(fake, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Rename(dir, filepath.Join(fake, Dir)); err != nil {
				t.Fatal(err)
			}
			runs, err := Load(filepath.Join(fake, Dir))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(Check(fake, runs), "\n")
			if !strings.Contains(got, tc.want) {
				t.Fatalf("problems:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}

// TestNudgeRewritesOnlyTheDigest: build-service's match string finds the driver's FROM, and the rewrite keeps
// every other byte; the nudged file still passes the base-nudge rule, and DriverBase returns the new reference
// while the placeholder is reported as a first push digest not recorded.
func TestNudgeRewritesOnlyTheDigest(t *testing.T) {
	root := workspacetest.Root(t)
	runs, err := Load(filepath.Join(root, Dir))
	if err != nil {
		t.Fatal(err)
	}
	_, repo := PushRepo(runs, BaseComponent)
	data, err := os.ReadFile(filepath.Join(root, DriverContainerfile))
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("12", 32)
	nudged := Nudge(string(data), repo, digest)
	if strings.Replace(string(data), PlaceholderDigest, digest, 1) != nudged {
		t.Fatalf("the nudge changed more than the digest")
	}
	if _, err := DriverBase(root); err == nil || !strings.Contains(err.Error(), "first push digest not recorded") {
		t.Errorf("DriverBase with the placeholder: %v, want first push digest not recorded", err)
	}
	fake := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fake, filepath.Dir(DriverContainerfile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, DriverContainerfile), []byte(nudged), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := DriverBase(fake); err != nil || got != repo+"@"+digest {
		t.Errorf("DriverBase after the nudge = %q, %v; want %s@%s", got, err, repo, digest)
	}
	if p := checkBaseNudge(fake, runs); len(p) > 0 {
		t.Errorf("after the nudge: %v", p)
	}
	if err := os.WriteFile(filepath.Join(fake, DriverContainerfile), []byte(strings.Replace(nudged, repo+"@"+digest, repo+":latest", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(checkBaseNudge(fake, runs), "\n"); !strings.Contains(p, "the form the aws-efs-utils-base nudge rewrites") {
		t.Errorf("a :latest FROM: problems %q", p)
	}
	pending := strings.Join(Pending(root, runs), "\n")
	if !strings.Contains(pending, DriverContainerfile+": first push digest not recorded") {
		t.Errorf("Pending does not report the placeholder:\n%s", pending)
	}
}

// TestLabelRulesCatchGaps: a Containerfile missing a required label, with another vendor, or whose version is
// not its module's is reported.
func TestLabelRulesCatchGaps(t *testing.T) {
	root := workspacetest.Root(t)
	fake := t.TempDir()
	for _, e := range []string{"driver", "operator"} {
		if err := os.Symlink(filepath.Join(root, e), filepath.Join(fake, e)); err != nil {
			t.Fatal(err)
		}
	}
	copyTree := func(rel, old, new string) {
		for f := range LabelledImages {
			data, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			if f == rel {
				data = []byte(strings.Replace(string(data), old, new, 1))
			}
			if strings.HasPrefix(f, "operator/") {
				continue // the operator folder is the repository's (symlink)
			}
			if err := os.MkdirAll(filepath.Join(fake, filepath.Dir(f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(fake, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, row := range []struct{ file, old, new, want string }{
		{"images/aws-efs-csi-driver/Containerfile", `distribution-scope="public" \`, `\`, "no LABEL distribution-scope"},
		{"images/aws-efs-csi-driver/Containerfile", `      cpe="cpe:/a:redhat:openshift:5.0::el9" \` + "\n", "", "no LABEL cpe"},
		{"images/aws-efs-utils-base/Containerfile", `vendor="Red Hat, Inc."`, `vendor="Someone"`, `vendor="Someone"`},
		{"images/aws-efs-csi-driver-operator/Containerfile", "ARG VERSION=", "ARG VERSION=9", "want operator/VERSION"},
	} {
		copyTree(row.file, row.old, row.new)
		if got := strings.Join(CheckLabels(fake), "\n"); !strings.Contains(got, row.want) {
			t.Errorf("%s with %q: problems %q, want %q", row.file, row.new, got, row.want)
		}
	}
}

// TestTagsWhereDigestsAreRequired: a reference to one of our components by tag, or any :latest, in a file a build
// or a nudge reads is reported.
func TestTagsWhereDigestsAreRequired(t *testing.T) {
	root := workspacetest.Root(t)
	runs, err := Load(filepath.Join(root, Dir))
	if err != nil {
		t.Fatal(err)
	}
	if p := checkDigestsWhereRequired(root, runs); len(p) > 0 {
		t.Fatalf("the repository: %v", p)
	}
	fake := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(fake, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("images/aws-efs-csi-driver-operator-catalog/v5.0/catalog-template.yaml", "entries:\n  - schema: olm.bundle\n    image: quay.io/redhat-user-workloads/aws-efs-csi-tenant/aws-efs-csi-driver-operator-bundle:v5.0.1\n")
	write(BuildArgsFile, "# quay.io/ignored/in-comments:latest\nOPM=quay.io/someone/opm:latest\nOK=quay.io/redhat-user-workloads/aws-efs-csi-tenant/aws-efs-csi-driver:abc@sha256:"+strings.Repeat("a", 64)+"\n")
	got := strings.Join(checkDigestsWhereRequired(fake, runs), "\n")
	for _, want := range []string{
		"catalog-template.yaml: quay.io/redhat-user-workloads/aws-efs-csi-tenant/aws-efs-csi-driver-operator-bundle:v5.0.1: want <repository>@sha256:<digest>",
		"images/versions.conf: quay.io/someone/opm:latest",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant one containing %q", got, want)
		}
	}
	for _, not := range []string{"in-comments", "aws-efs-csi-driver:abc"} {
		if strings.Contains(got, not) {
			t.Errorf("problems:\n%s\nreport %s, which is fine", got, not)
		}
	}
}

// TestBundleNudgeOfTheTemplates: build-service's rewrite for the bundle component changes only the digest of each
// template, which then names the pushed bundle by digest (what catalog:render pulls), and Check stays green.
func TestBundleNudgeOfTheTemplates(t *testing.T) {
	root := workspacetest.Root(t)
	runs, err := Load(filepath.Join(root, Dir))
	if err != nil {
		t.Fatal(err)
	}
	_, repo := PushRepo(runs, BundleComponent)
	digest := "sha256:" + strings.Repeat("cd", 32)
	versions, err := catalog.Versions(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		data, err := os.ReadFile(filepath.Join(root, catalog.TemplatePath(v)))
		if err != nil {
			t.Fatal(err)
		}
		nudged := Nudge(string(data), repo, digest)
		if nudged == string(data) || strings.Replace(string(data), PlaceholderDigest, digest, 1) != nudged {
			t.Fatalf("%s: the nudge of %s did not replace exactly the placeholder digest", catalog.TemplatePath(v), repo)
		}
		path := filepath.Join(t.TempDir(), catalog.TemplateFile)
		if err := os.WriteFile(path, []byte(nudged), 0o644); err != nil {
			t.Fatal(err)
		}
		if images, err := catalog.TemplateBundleImages(path); err != nil || len(images) != 1 || images[0] != repo+"@"+digest {
			t.Errorf("%s after the nudge names %v (%v), want %s@%s", catalog.TemplatePath(v), images, err, repo, digest)
		}
	}
}
