package testrun

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
	"github.com/openshift/aws-efs-csi/testharness/pkg/clusterimages"
)

func TestLocalClusterArgvRunsTheHarnessCommandOnOneDirectory(t *testing.T) {
	got := LocalClusterArgv("/repo", "up")
	want := []string{"go", "run", localClusterPackage, "up", "--dir", "/repo/_output/cluster"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LocalClusterArgv = %v; want %v", got, want)
	}
	if down := LocalClusterArgv("/repo", "down"); down[len(down)-1] != ClusterDir("/repo") {
		t.Fatalf("down acts on %s; want the directory up uses, %s", down[len(down)-1], ClusterDir("/repo"))
	}
}

// The targets run the harness by package path: it must name a main package of this repository.
func TestLocalClusterPackageExists(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	rel := strings.TrimPrefix(localClusterPackage, "github.com/openshift/aws-efs-csi/")
	b, err := os.ReadFile(filepath.Join(root, rel, "main.go"))
	if err != nil {
		t.Fatalf("the local cluster command %s: %v", localClusterPackage, err)
	}
	if !strings.Contains(string(b), "package main") {
		t.Fatalf("%s/main.go is not a main package", rel)
	}
}

func TestPlanRunsTheClusterSuite(t *testing.T) {
	suites, err := Plan(writeWorkspace(t), Options{GoTestFlags: []string{"-count=1"}})
	if err != nil {
		t.Fatal(err)
	}
	cl := suites[len(suites)-2]
	want := []string{"go", "test", "-race", "-tags", "cluster", "-timeout", "40m", "-v", "-count=1", "./suites/localcluster"}
	if cl.Name != "cluster testharness/suites/localcluster" || cl.Dir != "testharness" || !reflect.DeepEqual(cl.Argv, want) {
		t.Fatalf("suite = %+v; want the cluster suite running %v in testharness", cl, want)
	}
	needs := map[string]bool{}
	for _, r := range cl.Requires {
		needs[r.Package] = true
	}
	if cl.Prepare == nil {
		t.Error("the cluster suite does not build the project's images first")
	}
	for _, p := range []string{"gcc", "containerd", "runc", "containernetworking-plugins", "mmdebstrap", "python3.11"} {
		if !needs[p] {
			t.Errorf("cluster suite does not require %s", p)
		}
	}
}

// The cluster tests read the images' directory from the variable the plan sets; both packages must spell it alike.
func TestTheClusterTestsReadTheImagesVariable(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "testharness/suites/localcluster/images.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"`+clusterimages.ImagesDirEnv+`"`) {
		t.Fatalf("testharness/suites/localcluster/images.go does not read %s", clusterimages.ImagesDirEnv)
	}
}
