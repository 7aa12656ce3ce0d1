package catalog

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// opmVersion is the operator-registry release whose opm the tests run.
const opmVersion = "v1.50.0"

var opmOnce struct {
	sync.Once
	bin string
	err error
}

// opm returns the opm binary, built once per test process through a throwaway module under
// _output/tools/opm-<version> and kept there across runs (about four minutes with a cold module cache).
func opm(t *testing.T) string {
	t.Helper()
	opmOnce.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", "..", ".."))
		if err != nil {
			opmOnce.err = err
			return
		}
		opmOnce.bin, opmOnce.err = buildOPM(filepath.Join(root, "_output", "tools", "opm-"+opmVersion))
	})
	if opmOnce.err != nil {
		t.Fatal(opmOnce.err)
	}
	return opmOnce.bin
}

func buildOPM(dir string) (string, error) {
	bin := filepath.Join(dir, "opm")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod":   "module opmbuild\n\ngo 1.24\n\nrequire github.com/operator-framework/operator-registry " + opmVersion + "\n",
		"tools.go": "//go:build tools\n\npackage tools\n\nimport _ \"github.com/operator-framework/operator-registry/cmd/opm\"\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{
		{"mod", "tidy"},
		{"build", "-o", bin + ".tmp", "github.com/operator-framework/operator-registry/cmd/opm"},
	} {
		start := time.Now()
		fmt.Fprintf(os.Stderr, "opm %s: go %s in %s (about four minutes with a cold module cache)...\n", opmVersion, strings.Join(args, " "), dir)
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		fmt.Fprintf(os.Stderr, "opm %s: go %s done in %s\n", opmVersion, args[0], time.Since(start).Round(time.Second))
	}
	return bin, os.Rename(bin+".tmp", bin)
}

// runOPM runs opm and returns its standard output; a failure fails the test with opm's output.
func runOPM(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), opm(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("opm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}
