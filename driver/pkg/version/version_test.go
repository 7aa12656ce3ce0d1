package version

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestGetReportsUnstampedDefaults(t *testing.T) {
	got := Get()
	if got.Version != "v0.0.0-unstamped" || got.Commit != "unknown" || got.TreeState != "unknown" {
		t.Fatalf("unstamped build: got %+v", got)
	}
	if got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("platform = %q", got.Platform)
	}
}

func TestStringNamesEveryField(t *testing.T) {
	s := Info{Version: "v1.2.3", Commit: "abc", TreeState: "dirty", GoVersion: "go1.26", Platform: "linux/s390x"}.String()
	for _, want := range []string{"version=v1.2.3", "commit=abc", "tree=dirty", "go=go1.26", "platform=linux/s390x"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, missing %q", s, want)
		}
	}
}

// TestJSONIsUpstreamsForm states upstream v3.4.1's --version output (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd
// cmd/main.go prints GetVersionJSON: json.MarshalIndent of VersionInfo with two-space indent): a JSON object with
// driverVersion, gitCommit, buildDate, efsClientSource, goVersion, compiler and platform, in that order.
func TestJSONIsUpstreamsForm(t *testing.T) {
	out := Info{Version: "v1.2.3", Commit: "abc", TreeState: "clean", GoVersion: "go1.26", Platform: "linux/arm64"}.JSON()
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--version output is not JSON: %v\n%s", err, out)
	}
	want := map[string]string{"driverVersion": "v1.2.3", "gitCommit": "abc", "buildDate": "", "efsClientSource": "k8s",
		"goVersion": "go1.26", "compiler": runtime.Compiler, "platform": "linux/arm64", "treeState": "clean"}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %q (present %v), want %q", k, g, ok, v)
		}
	}
	order := []string{`"driverVersion"`, `"gitCommit"`, `"buildDate"`, `"efsClientSource"`, `"goVersion"`, `"compiler"`, `"platform"`}
	last := -1
	for _, k := range order {
		i := strings.Index(out, k)
		if i < last {
			t.Errorf("%s out of upstream's order in\n%s", k, out)
		}
		last = i
	}
	if !strings.HasPrefix(out, "{\n  \"driverVersion\"") {
		t.Errorf("not indented as upstream's MarshalIndent(\"\", \"  \"):\n%s", out)
	}
}
