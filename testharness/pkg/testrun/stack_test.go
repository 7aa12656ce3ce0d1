package testrun

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

func TestPlanRunsTheStackSuiteWithItsDirectory(t *testing.T) {
	suites, err := Plan(writeWorkspace(t), Options{GoTestFlags: []string{"-count=1"}})
	if err != nil {
		t.Fatal(err)
	}
	last := suites[len(suites)-1]
	if last.Name != "cluster testharness/suites/stack" || last.Dir != "testharness" || last.Prepare == nil {
		t.Fatalf("last suite = %+v; want the stack suite in testharness with a Prepare step", last)
	}
	wantArgv := []string{"go", "test", "-race", "-tags", "cluster", "-timeout", "40m", "-v", "-count=1", "./suites/stack"}
	if !slices.Equal(last.Argv, wantArgv) {
		t.Errorf("argv %v; want %v", last.Argv, wantArgv)
	}
	if !slices.Contains(Requirements(suites), ClusterImagesNeeds[0]) {
		t.Errorf("requirements lack %v, which building the project's images needs", ClusterImagesNeeds[0])
	}
	if !slices.Contains(last.Requires, OLMNeeds[0]) {
		t.Errorf("the stack suite does not require %v, the cp of OLM's image (it installs the operator through OLM too)", OLMNeeds[0])
	}
}

// The stack suite's catalog names the bundle in the repository the stack package loads it under.
func TestStackBundleRepositoryMatchesTheStackPackage(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, clusterSuiteDir, stackSuitePackage, "images.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`repository = "localhost/aws-efs-csi-e2e/"`, `BundleImageName = "` + strings.TrimPrefix(stackBundleRepository, "localhost/aws-efs-csi-e2e/") + `"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s/images.go does not declare %s", stackSuitePackage, want)
		}
	}
}

func TestRunFailsASuiteWhosePreparationFails(t *testing.T) {
	suites := []Suite{
		{Name: "unprepared", Dir: ".", Argv: []string{"sh", "-c", "echo ran-$0", "anyway"},
			Prepare: func(context.Context, io.Writer) ([]string, error) { return nil, errors.New("no images") }},
		{Name: "prepared", Dir: ".", Argv: []string{"sh", "-c", "echo $PREPARED"},
			Prepare: func(context.Context, io.Writer) ([]string, error) { return []string{"PREPARED=prepared-env-seen"}, nil }},
	}
	var out bytes.Buffer
	err := Run(t.Context(), t.TempDir(), suites, &out)
	if err == nil || !strings.Contains(err.Error(), "test suites failed: unprepared") {
		t.Fatalf("Run = %v", err)
	}
	for _, want := range []string{"unprepared FAILED preparing", "no images", "prepared-env-seen", "prepared passed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "ran-anyway") {
		t.Errorf("the suite whose preparation failed ran:\n%s", out.String())
	}
}

// The suite and the images command live in testharness/suites/stack; the names this package uses must be theirs.
func TestStackSuiteNamesMatchTheSuitePackage(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(root, clusterSuiteDir)
	if b, err := os.ReadFile(filepath.Join(mod, stackImagesCmd, "main.go")); err != nil || !strings.Contains(string(b), "package main") {
		t.Errorf("%s is not a main package: %v", stackImagesCmd, err)
	}
	for file, want := range map[string]string{
		"main_test.go": `DirEnv = "` + stackDirEnv + `"`,
		"images.go":    `PinsFile = "pins.txt"`,
	} {
		b, err := os.ReadFile(filepath.Join(mod, stackSuitePackage, file))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s/%s does not declare %s: %v", stackSuitePackage, file, want, err)
		}
	}
}
