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

	"golang.org/x/mod/modfile"
)

const opmPackage = "github.com/operator-framework/operator-registry/cmd/opm"

var opmOnce struct {
	sync.Once
	bin, home string
	err       error
}

// acceptAnything is the containers/image signature policy opm needs to pull images: the tests pull only from
// their own loopback registry.
const acceptAnything = `{"default": [{"type": "insecureAcceptAnything"}]}`

// opm returns the opm binary of the operator-registry version this module requires (a tool of the magefiles
// module, so the catalog code and the opm that checks it never disagree on the version), built once into
// _output/tools/opm-<version>/ and kept there across runs (about four minutes with a cold build cache).
func opm(t *testing.T) string {
	t.Helper()
	opmOnce.Do(func() {
		version, err := registryVersion()
		if err != nil {
			opmOnce.err = err
			return
		}
		root, err := filepath.Abs(filepath.Join("..", "..", ".."))
		if err != nil {
			opmOnce.err = err
			return
		}
		dir := filepath.Join(root, "_output", "tools", "opm-"+version)
		if opmOnce.bin, opmOnce.err = buildOPM(dir); opmOnce.err != nil {
			return
		}
		// opm reads $HOME/.config/containers/policy.json; give it a home of its own with that policy.
		opmOnce.home = filepath.Join(dir, "home")
		policy := filepath.Join(opmOnce.home, ".config", "containers", "policy.json")
		if opmOnce.err = os.MkdirAll(filepath.Dir(policy), 0o755); opmOnce.err == nil {
			opmOnce.err = os.WriteFile(policy, []byte(acceptAnything), 0o644)
		}
	})
	if opmOnce.err != nil {
		t.Fatal(opmOnce.err)
	}
	return opmOnce.bin
}

// registryVersion is the operator-registry version the magefiles module requires (its go.mod).
func registryVersion() (string, error) {
	path := filepath.Join("..", "..", "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax(path, data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range f.Require {
		if r.Mod.Path == "github.com/operator-framework/operator-registry" {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("%s does not require github.com/operator-framework/operator-registry", path)
}

func buildOPM(dir string) (string, error) {
	bin := filepath.Join(dir, "opm")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "opm-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	start := time.Now()
	fmt.Fprintf(os.Stderr, "opm: go build %s into %s (about four minutes with a cold build cache)...\n", opmPackage, dir)
	// The magefiles module's own go.mod pins opm (its tool block). cgo is off (the tests use no sqlite command),
	// so containers/image uses its pure-Go OpenPGP code instead of gpgme, which needs cgo.
	cmd := exec.Command("go", "build", "-tags", "containers_image_openpgp", "-o", tmp.Name(), opmPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", opmPackage, err, out)
	}
	fmt.Fprintf(os.Stderr, "opm: built in %s\n", time.Since(start).Round(time.Second))
	return bin, os.Rename(tmp.Name(), bin)
}

// runOPM runs opm and returns its standard output; a failure fails the test with opm's output.
func runOPM(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := tryOPM(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryOPM runs opm and returns its standard output, or an error with its standard error.
func tryOPM(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), opm(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+opmOnce.home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("opm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}
