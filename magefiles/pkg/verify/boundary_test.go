package verify

import (
	"reflect"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

func TestCrossingsNamesWhereTheBoundaryIsCrossed(t *testing.T) {
	goList := strings.Join([]string{
		"fmt",
		"k8s.io/cri-api/pkg/apis k8s.io/cri-api/pkg/apis/runtime fmt",
		"example.com/tool/pkg/cluster k8s.io/cri-api/pkg/apis fmt",
		"example.com/tool k8s.io/cri-api-lookalike example.com/tool/pkg/cluster github.com/openshift/aws-efs-csi/testharness/pkg/testrun",
	}, "\n")
	got := Crossings(goList, HarnessOnly)
	want := []string{
		"example.com/tool imports github.com/openshift/aws-efs-csi/testharness/pkg/testrun",
		"example.com/tool/pkg/cluster imports k8s.io/cri-api/pkg/apis",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Crossings = %q; want %q", got, want)
	}
}

// A magefile importing the harness module fails the check, naming the import; without it the check passes.
func TestHarnessBoundaryFailsAMagefileThatImportsTheHarness(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"go.work":                         "go 1.26\n\nuse (\n\t./magefiles\n\t./testharness\n)\n",
		"magefiles/go.mod":                "module github.com/openshift/aws-efs-csi/magefiles\n\ngo 1.26\n",
		"magefiles/pkg/ok/ok.go":          "package ok\n",
		"testharness/go.mod":              "module github.com/openshift/aws-efs-csi/testharness\n\ngo 1.26\n",
		"testharness/pkg/testrun/plan.go": "package testrun\n\n// Plan plans.\nfunc Plan() {}\n",
		"magefiles/magefile.go":           "//go:build mage\n\npackage main\n\nimport _ \"github.com/openshift/aws-efs-csi/magefiles/pkg/ok\"\n",
		"magefiles/pkg/ok/ok_test.go":     "package ok\n\nimport _ \"github.com/openshift/aws-efs-csi/testharness/pkg/testrun\"\n",
	})
	if err := runCheck(t, root, "harness boundary"); err != nil {
		t.Fatalf("a test file importing the harness failed the check: %v", err)
	}
	writeFiles(t, root, map[string]string{
		"magefiles/magefile.go": "//go:build mage\n\npackage main\n\nimport _ \"github.com/openshift/aws-efs-csi/testharness/pkg/testrun\"\n",
	})
	err := runCheck(t, root, "harness boundary")
	if err == nil || !strings.Contains(err.Error(), "github.com/openshift/aws-efs-csi/magefiles imports github.com/openshift/aws-efs-csi/testharness/pkg/testrun") {
		t.Fatalf("harness boundary = %v; want the magefile's import named", err)
	}
}

// The repository itself: neither the magefile, which every image's builder stage compiles, nor any non-test
// package of the magefiles module compiles the test harness (issue 23 item 9).
func TestTheMagefileDoesNotCompileTheHarness(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := toolchain.Find("go", "list the magefile's packages")
	if err != nil {
		t.Fatal(err)
	}
	mods, err := workspace.Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := harnessBoundary(t.Context(), goBin, root, mods); err != nil {
		t.Fatal(err)
	}
}
