package fakeaws

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// debianPython is the interpreter CI installs python3-botocore for (testharness/pkg/testrun); FAKEAWS_PYTHON
// overrides it for local runs with another botocore.
const debianPython = "/usr/bin/python3"

// TestBotocoreAgainstStandaloneProgram builds cmd/fakeaws, starts it on port 0, reads its URL from the first line
// of stdout, and drives it with real botocore: the client efs-utils uses.
func TestBotocoreAgainstStandaloneProgram(t *testing.T) {
	python := os.Getenv("FAKEAWS_PYTHON")
	if python == "" {
		python = debianPython
	}
	if err := exec.CommandContext(t.Context(), python, "-c", "import botocore").Run(); err != nil {
		t.Skipf("%s cannot import botocore (%v): install the Debian package python3-botocore "+
			"(apt-get install -y python3-botocore; CI installs it)", python, err)
	}
	bin := filepath.Join(t.TempDir(), "fakeaws")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/fakeaws")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/fakeaws: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(t.Context(), bin, "--addr", "127.0.0.1:0", "--region", "us-east-1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start fakeaws: %v", err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("fakeaws printed no URL; stderr:\n%s", stderr.String())
	}
	url := lines.Text()
	go func() { exited <- cmd.Wait() }()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, ":0") {
		t.Fatalf("first line %q is not the listening URL", url)
	}

	subnet := New(Options{}).Subnets()[1] // the program runs with default options: same subnets
	check := exec.CommandContext(t.Context(), python, "testdata/botocore_check.py", url, subnet.SubnetId,
		subnet.AvailabilityZoneName)
	out, err := check.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("botocore_check.py: %v\n%s\nfakeaws stderr:\n%s", err, msg, stderr.String())
	}
	var got struct {
		Botocore, FileSystemID, CreateState, DescribedZoneID, FSExistsCode, MountTargetIP string
		MountTargets                                                                      [][]string
		Zones                                                                             [][]string
		FilteredZones                                                                     []string
		BadZoneCode, AccessPointID, APExistsCode, APExistsID, APNotFoundCode              string
		APExistsStatus                                                                    int
		APPages                                                                           []int
		CallerAccount                                                                     string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("botocore_check.py output %q: %v", out, err)
	}
	t.Logf("botocore %s", got.Botocore)
	checks := []struct {
		name      string
		got, want any
	}{
		{"CreateFileSystem state", got.CreateState, "creating"},
		{"One Zone AZ ID", got.DescribedZoneID, subnet.AvailabilityZoneId},
		{"CreationToken reuse", got.FSExistsCode, "FileSystemAlreadyExists"},
		{"mount target IP", got.MountTargetIP, "172.31.16.4"},
		{"mount targets", len(got.MountTargets), 1},
		{"DescribeAvailabilityZones", len(got.Zones) == 1 && got.Zones[0][1] == subnet.AvailabilityZoneId, true},
		{"zone-id filter", strings.Join(got.FilteredZones, ","), subnet.AvailabilityZoneName},
		{"unknown zone", got.BadZoneCode, "InvalidParameterValue"},
		{"AccessPointAlreadyExists code", got.APExistsCode, "AccessPointAlreadyExists"},
		{"AccessPointAlreadyExists status", got.APExistsStatus, 409},
		{"AccessPointAlreadyExists id", got.APExistsID, got.AccessPointID},
		{"paginated DescribeAccessPoints", len(got.APPages), 3},
		{"AccessPointNotFound", got.APNotFoundCode, "AccessPointNotFound"},
		{"GetCallerIdentity", got.CallerAccount, "123456789012"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(got.MountTargets) == 1 && (got.MountTargets[0][1] != subnet.AvailabilityZoneName || got.MountTargets[0][4] != "available") {
		t.Errorf("mount target %v, want one available in %s", got.MountTargets[0], subnet.AvailabilityZoneName)
	}
}
