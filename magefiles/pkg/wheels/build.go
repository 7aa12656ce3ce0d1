package wheels

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Build returns a pure-Python wheel for every requirement, from the verified files of e.Dir, the way the
// Containerfile's wheels stage makes them: pip wheel --no-index --find-links e.Dir --require-hashes --no-deps
// --no-build-isolation, so pip checks every hash again, builds sdists with the setuptools and wheel already
// installed and reaches no network. The wheels are kept in e.BuiltDir under the sha256 of the requirements file,
// which pins every input, so each pinned set is built once.
func (e Env) Build(ctx context.Context, pip Pip) ([]string, error) {
	content, reqs, err := e.requirements()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(content))
	dir := filepath.Join(e.BuiltDir, hex.EncodeToString(sum[:]))
	if ws, err := matchWheels(dir, reqs); err == nil {
		return ws, nil
	}
	if err := pip.Check(ctx, "setuptools", "wheel", "pip"); err != nil {
		return nil, fmt.Errorf("building the wheels of %s: %w", e.Requirements, err)
	}
	if err := os.MkdirAll(e.BuiltDir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(e.BuiltDir, ".build-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := pip.Run(ctx, "wheel", "--no-index", "--find-links", e.Dir, "--require-hashes", "--no-deps",
		"--no-build-isolation", "--wheel-dir", tmp, "-r", e.Requirements); err != nil {
		return nil, fmt.Errorf("wheels: building %s offline from %s (run `go tool mage wheels` first): %w", e.Requirements, e.Dir, err)
	}
	if _, err := matchWheels(tmp, reqs); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	return matchWheels(dir, reqs)
}

// matchWheels returns the wheels of dir in the order of reqs, and fails unless dir holds exactly one pure-Python
// wheel (any Python 3, abi none, platform any) of each requirement's name and version: the Python layer is
// platform-independent.
func matchWheels(dir string, reqs []Requirement) ([]string, error) {
	found, err := filepath.Glob(filepath.Join(dir, "*.whl"))
	if err != nil || len(found) == 0 {
		return nil, fmt.Errorf("no wheels in %s", dir)
	}
	out := make([]string, len(reqs))
	for _, w := range found {
		name, version := WheelPin(w)
		i := slices.IndexFunc(reqs, func(r Requirement) bool { return r.Normalized() == Normalize(name) })
		switch {
		case !strings.HasSuffix(w, "-none-any.whl"):
			return nil, fmt.Errorf("%s is not a pure-Python wheel (abi none, platform any): the image installs pure Python only", filepath.Base(w))
		case i < 0 || reqs[i].Version != version:
			return nil, fmt.Errorf("%s is not a wheel of any pinned name==version", filepath.Base(w))
		}
		out[i] = w
	}
	for i, r := range reqs {
		if out[i] == "" {
			return nil, fmt.Errorf("%s: no wheel in %s", r, dir)
		}
	}
	return out, nil
}

// WheelPin returns the project name and version a wheel's file name (PEP 427) states.
func WheelPin(file string) (name, version string) {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(file), ".whl"), "-")
	if len(parts) < 2 {
		return parts[0], ""
	}
	return parts[0], parts[1]
}
