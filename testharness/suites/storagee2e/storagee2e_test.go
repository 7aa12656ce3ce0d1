package storagee2e

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func TestSelectImages(t *testing.T) {
	listing := strings.Join([]string{
		StandInRegistry + "/agnhost:2.63.0",
		StandInRegistry + "/busybox:1.37.0-1",
		"registry.k8s.io/etcd:3.6.8-0",
		StandInRegistry + "/nginx:1.15-4",
		StandInRegistry + "/nginx:1.27-0",
		StandInRegistry + "/glibc-dns-testing:2.0.0",
		StandInRegistry + "/sample-apiserver:1.29.2",
		"invalid.registry.k8s.io/invalid/busybox:1.0", // another registry's busybox is not ours to stand in for
	}, "\n")
	got, err := selectImages(listing)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{StandInRegistry + "/agnhost:2.63.0", StandInRegistry + "/busybox:1.37.0-1", StandInRegistry + "/nginx:1.15-4",
		StandInRegistry + "/nginx:1.27-0", StandInRegistry + "/glibc-dns-testing:2.0.0"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("selectImages = %v, want %v", got, want)
	}
	if _, err := selectImages(StandInRegistry + "/agnhost:2.63.0\n" + StandInRegistry + "/busybox:1.37.0-1\n"); err == nil || !strings.Contains(err.Error(), "no nginx image") {
		t.Errorf("a listing without nginx: err %v, want one naming nginx", err)
	}
}

// junitSample has what ginkgo writes: suite nodes, a spec left out by the focus, one that skipped itself, one that
// passed and one that failed.
const junitSample = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" disabled="1" errors="0" failures="1" time="30">
  <testsuite name="Kubernetes e2e suite" package="/" tests="5" disabled="1" skipped="2" errors="0" failures="1" time="30">
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="0.1"></testcase>
    <testcase name="[It] [sig-apps] Deployment should run" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] [sig-storage] External Storage [Driver: efs.csi.aws.com] [Testpattern: Dynamic PV (block volmode)] volumes should store data" classname="Kubernetes e2e suite" status="skipped" time="0.2">
      <skipped message="skipped - Driver efs.csi.aws.com doesn&#39;t support Block -- skipping"></skipped>
    </testcase>
    <testcase name="[It] [sig-storage] External Storage [Driver: efs.csi.aws.com] [Testpattern: Dynamic PV (default fs)] volumes should store data" classname="Kubernetes e2e suite" status="passed" time="20"></testcase>
    <testcase name="[It] [sig-storage] External Storage [Driver: efs.csi.aws.com] [Testpattern: Dynamic PV (default fs)] subPath should support existing directory" classname="Kubernetes e2e suite" status="failed" time="9">
      <failure message="Timed out after 300s.&#xA;pod never ran" type="failed">[FAILED] Timed out</failure>
    </testcase>
    <testcase name="[SynchronizedAfterSuite]" classname="Kubernetes e2e suite" status="passed" time="0.1"></testcase>
    <testcase name="[ReportAfterSuite] Kubernetes e2e suite report" classname="Kubernetes e2e suite" status="passed" time="0"></testcase>
  </testsuite>
</testsuites>`

func TestReadJUnit(t *testing.T) {
	rep, err := ReadJUnit(strings.NewReader(junitSample))
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Summary(); got != "1 passed, 1 failed, 1 skipped" {
		t.Errorf("Summary = %q\n%s", got, rep)
	}
	if len(rep.Skipped) == 1 && rep.Skipped[0].Message != "Driver efs.csi.aws.com doesn't support Block -- skipping" {
		t.Errorf("skip reason %q", rep.Skipped[0].Message)
	}
	if len(rep.Failed) == 1 && !strings.HasPrefix(rep.Failed[0].Message, "Timed out after 300s.") {
		t.Errorf("failure message %q", rep.Failed[0].Message)
	}
	if len(rep.Passed) == 1 && rep.Passed[0].Duration != 20*time.Second {
		t.Errorf("duration %s, want 20s", rep.Passed[0].Duration)
	}
	if s := rep.String(); !strings.Contains(s, "FAILED     9s [sig-storage]") || !strings.Contains(s, "          Timed out after 300s.\n") {
		t.Errorf("String() does not list the failure with the first line of its message:\n%s", s)
	}
	if _, err := ReadJUnit(strings.NewReader("not xml")); err == nil {
		t.Error("ReadJUnit of a non-XML report: no error")
	}
}

// TestDriverDefinition reads testdriver.yaml as e2e.test does (a YAML object of Go field names) and holds it to what
// the driver is: a shared file system with no block mode, snapshots, expansion or topology.
func TestDriverDefinition(t *testing.T) {
	var def struct {
		StorageClass struct{ FromExistingClassName string }
		DriverInfo   struct {
			Name                 string
			RequiredAccessModes  []string
			SupportedSizeRange   struct{ Min, Max string }
			SupportedMountOption map[string]struct{}
			Capabilities         map[string]bool
		}
	}
	// Strict: e2e.test ignores a misspelt key, which would silently drop what it says.
	if err := yaml.UnmarshalStrict(DriverDefinition, &def); err != nil {
		t.Fatal(err)
	}
	if def.StorageClass.FromExistingClassName != StorageClassName {
		t.Errorf("StorageClass %q, want %q (the class the suite creates)", def.StorageClass.FromExistingClassName, StorageClassName)
	}
	if def.DriverInfo.Name != "efs.csi.aws.com" {
		t.Errorf("driver name %q", def.DriverInfo.Name)
	}
	known := map[string]bool{"persistence": true, "block": true, "fsGroup": true, "volumeMountGroup": true, "exec": true,
		"snapshotDataSource": true, "snapshotMetadata": true, "groupSnapshot": true, "pvcDataSource": true, "multipods": true,
		"RWX": true, "controllerExpansion": true, "nodeExpansion": true, "offlineExpansion": true, "onlineExpansion": true,
		"volumeLimits": true, "singleNodeVolume": true, "topology": true, "capacity": true, "FSResizeFromSourceNotSupported": true,
		"readWriteOncePod": true, "multiplePVsSameID": true, "capReadOnlyMany": true, "seLinuxMount": true}
	for c := range def.DriverInfo.Capabilities {
		if !known[c] {
			t.Errorf("capability %q is not one of Kubernetes %s's storage test capabilities", c, "v1.36")
		}
	}
	for c, want := range map[string]bool{"persistence": true, "exec": true, "multipods": true, "RWX": true,
		"block": false, "snapshotDataSource": false, "controllerExpansion": false, "topology": false} {
		if got := def.DriverInfo.Capabilities[c]; got != want {
			t.Errorf("capability %s = %v, want %v", c, got, want)
		}
	}
	if strings.Join(def.DriverInfo.RequiredAccessModes, ",") != "ReadWriteMany" {
		t.Errorf("RequiredAccessModes %v, want [ReadWriteMany]: EFS volumes are used shared", def.DriverInfo.RequiredAccessModes)
	}
}
