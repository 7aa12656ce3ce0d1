package toolchain

import (
	"errors"
	"strings"
	"testing"
)

func TestFindMissingProgramExplainsItself(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GOROOT", "")
	_, err := Find("git", "stamp the commit into binaries")
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("Find(git) = %v, want ErrMissing", err)
	}
	for _, want := range []string{`"git"`, "stamp the commit", "apt-get install -y git"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestFindPresentProgram(t *testing.T) {
	path, err := Find("sh", "run scripts")
	if err != nil || !strings.HasSuffix(path, "/sh") {
		t.Fatalf("Find(sh) = %q, %v", path, err)
	}
}

func TestOutputReportsStderr(t *testing.T) {
	if out, err := Output(t.Context(), t.TempDir(), nil, "sh", "-c", "echo hi"); err != nil || out != "hi" {
		t.Fatalf("Output = %q, %v", out, err)
	}
	_, err := Output(t.Context(), t.TempDir(), nil, "sh", "-c", "echo broken >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Output error = %v, want stderr and status", err)
	}
}
