package version

import (
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
