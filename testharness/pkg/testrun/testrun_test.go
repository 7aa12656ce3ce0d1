package testrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeWorkspace writes a repository with two modules and the folder of every other suite.
func writeWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.work":                               "go 1.26\n\nuse (\n\t./driver\n\t./operator\n)\n",
		"driver/go.mod":                         "module example.com/driver\n\ngo 1.26\n",
		"operator/go.mod":                       "module example.com/operator\n\ngo 1.26\n",
		"efs-utils/README.md":                   "x",
		"testharness/suites/localcluster/x.go":  "package localcluster\n",
		"testharness/suites/stack/main_test.go": "package stack\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestPlan(t *testing.T) {
	suites, err := Plan(writeWorkspace(t), Options{GoTestFlags: []string{"-run", "TestX"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range suites {
		names = append(names, s.Name)
	}
	wantNames := []string{"go driver", "go operator", "pytest efs-utils", "cluster testharness/suites/localcluster", "cluster testharness/suites/stack"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("suites = %v, want %v", names, wantNames)
	}
	want := []string{"go", "test", "-race", "-timeout", "30m", "-run", "TestX", "./..."}
	if !reflect.DeepEqual(suites[0].Argv, want) || suites[0].Dir != "driver" {
		t.Fatalf("driver suite = %+v, want argv %v in driver", suites[0], want)
	}
	if py := suites[2]; len(py.Requires) == 0 || py.Argv[len(py.Argv)-1] != "efs-utils" {
		t.Fatalf("efs-utils suite = %+v, want pytest of efs-utils with requirements", py)
	}
	// each once, though driver and operator both need race and Python; the driver alone needs the real NFS
	if n := len(Requirements(suites[:3])); n != len(raceNeeds)+len(pythonNeeds)+len(RealNFSNeeds) {
		t.Fatalf("Requirements of the go and pytest suites = %v", Requirements(suites[:3]))
	}
}

// A suite whose folder is gone fails the plan, naming the folder, instead of leaving the suite out.
func TestPlanFailsWhenASuiteFolderIsMissing(t *testing.T) {
	for _, dir := range []string{"efs-utils", "testharness/suites/localcluster", "testharness/suites/stack"} {
		t.Run(dir, func(t *testing.T) {
			root := writeWorkspace(t)
			if err := os.RemoveAll(filepath.Join(root, dir)); err != nil {
				t.Fatal(err)
			}
			suites, err := Plan(root, Options{})
			if err == nil || !strings.Contains(err.Error(), "missing suite folder under "+root+": "+dir+";") {
				t.Fatalf("Plan without %s = %d suites, %v; want an error naming %s", dir, len(suites), err, dir)
			}
		})
	}
}

func TestRunGoesOnAfterAFailureAndSummarises(t *testing.T) {
	root := t.TempDir()
	suites := []Suite{
		{Name: "fails", Dir: ".", Argv: []string{"sh", "-c", "echo from-fails; exit 1"}},
		{Name: "passes", Dir: ".", Argv: []string{"sh", "-c", "echo from-passes $MARK"}, Env: []string{"MARK=env-seen"}},
	}
	var out bytes.Buffer
	err := Run(t.Context(), root, suites, &out)
	if err == nil || !strings.Contains(err.Error(), "test suites failed: fails") {
		t.Fatalf("Run = %v", err)
	}
	for _, want := range []string{"from-fails", "fails FAILED", "from-passes env-seen", "passes passed", "suites: 1 passed, 1 failed\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunPreparesASuiteAndPassesItsEnvironment(t *testing.T) {
	root := t.TempDir()
	suites := []Suite{
		{Name: "prepare fails", Dir: ".", Argv: []string{"sh", "-c", "echo ran-$((1+1))"},
			Prepare: func(context.Context, io.Writer) ([]string, error) { return nil, errors.New("no root") }},
		{Name: "prepared", Dir: ".", Argv: []string{"sh", "-c", "echo images at $IMAGES"}, Env: []string{"A=1"},
			Prepare: func(_ context.Context, out io.Writer) ([]string, error) {
				fmt.Fprintln(out, "building images")
				return []string{"IMAGES=/out"}, nil
			}},
	}
	var out bytes.Buffer
	err := Run(t.Context(), root, suites, &out)
	if err == nil || !strings.Contains(err.Error(), "test suites failed: prepare fails") || strings.Contains(err.Error(), "prepared") {
		t.Fatalf("Run = %v; want only the suite whose preparation failed to fail", err)
	}
	if strings.Contains(out.String(), "ran-2") {
		t.Errorf("the command ran although its preparation failed:\n%s", out.String())
	}
	for _, want := range []string{"prepare fails FAILED preparing", "no root", "building images", "images at /out", "suites: 1 passed, 1 failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if len(suites[1].Env) != 1 {
		t.Errorf("Run changed the suite's Env: %v", suites[1].Env)
	}
}
