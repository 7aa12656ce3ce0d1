// Package pybuild turns a hash-verified source distribution into a wheel the way OpenShift's aws-efs-utils image
// installs botocore: pip with --no-build-isolation, so the build uses the setuptools and wheel already installed
// (RHEL's python3-setuptools and python3-wheel RPMs in the Containerfile, Debian's packages on a build host) and
// nothing is downloaded. The wheel is kept under the sdist's sha256, so each sdist is built once; installing it
// (wheelinstall) reads only the archive's contents, so the image layer is the same for the same sdist and tools.
package pybuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheels"
)

// Builder builds wheels from sdists.
type Builder struct {
	// Python is an interpreter with pip, setuptools and wheel; empty means FindPython.
	Python string
	// CacheDir keeps one directory per sdist sha256 holding its wheel (_output/wheels/built).
	CacheDir string
	// MTime is SOURCE_DATE_EPOCH for the build tools (the dates inside the wheel archive).
	MTime time.Time
}

// FindPython returns the interpreter used to build sdists: $WHEELS_PYTHON when set, else the system python3
// (/usr/bin/python3, where Debian's python3-setuptools and python3-wheel install), else python3 on PATH.
func FindPython(getenv func(string) string) string {
	if p := getenv("WHEELS_PYTHON"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// Installable returns a wheel file for every verified distribution: wheels as they are, sdists built (or taken
// from the cache).
func (b Builder) Installable(ctx context.Context, dists []wheels.Verified) ([]string, error) {
	out := make([]string, 0, len(dists))
	for _, d := range dists {
		if !d.Sdist {
			out = append(out, d.Path)
			continue
		}
		w, err := b.Wheel(ctx, d)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// Wheel returns the wheel built from the verified sdist d, building it when the cache has none for d's sha256.
func (b Builder) Wheel(ctx context.Context, d wheels.Verified) (string, error) {
	dir := filepath.Join(b.CacheDir, d.SHA256)
	if w, ok := cached(dir); ok {
		return w, nil
	}
	if err := os.MkdirAll(b.CacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(b.CacheDir, ".build-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "wheel")
	if err := b.build(ctx, d, tmp, out); err != nil {
		return "", err
	}
	w, ok := cached(out)
	if !ok {
		return "", fmt.Errorf("%s: building %s gave no single wheel in %s", d.Requirement, filepath.Base(d.Path), out)
	}
	f, err := wheels.ParseFilename(filepath.Base(w))
	switch {
	case err != nil:
		return "", err
	case !f.Pure():
		return "", fmt.Errorf("%s: %s built %s, which is not a pure-Python wheel (py3-none-any): the image installs pure Python only", d.Requirement, filepath.Base(d.Path), filepath.Base(w))
	case f.Project != d.Requirement.Normalized() || f.Version != d.Requirement.Version:
		return "", fmt.Errorf("%s: %s built %s, another project or version", d.Requirement, filepath.Base(d.Path), filepath.Base(w))
	}
	if err := os.Rename(out, dir); err != nil {
		if w, ok := cached(dir); ok { // built at the same time by another run
			return w, nil
		}
		return "", err
	}
	return filepath.Join(dir, filepath.Base(w)), nil
}

// build runs pip wheel offline on the sdist, with a clean environment so that no user or site configuration, and
// no network, takes part.
func (b Builder) build(ctx context.Context, d wheels.Verified, home, out string) error {
	python := b.Python
	if python == "" {
		python = FindPython(os.Getenv)
	}
	if err := exec.CommandContext(ctx, python, "-c", "import setuptools, wheel, pip").Run(); err != nil {
		return fmt.Errorf("%s is an sdist and is built into a wheel with %s, which lacks pip, setuptools or wheel (%v): install python3-pip, python3-setuptools and python3-wheel (Debian and RHEL), or set WHEELS_PYTHON to an interpreter that has them",
			d.Requirement, python, err)
	}
	cmd := exec.CommandContext(ctx, python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
		"--no-cache-dir", "--disable-pip-version-check", "--no-color", "--wheel-dir", out, d.Path)
	cmd.Dir = home
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C.UTF-8", "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1",
		"PIP_CONFIG_FILE=/dev/null", "PYTHONNOUSERSITE=1", "SOURCE_DATE_EPOCH=" + strconv.FormatInt(b.MTime.Unix(), 10),
	}
	if data, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: building a wheel from %s with %s -m pip wheel: %v\n%s", d.Requirement, filepath.Base(d.Path), python, err, strings.TrimSpace(string(data)))
	}
	return nil
}

// cached returns the one wheel in dir.
func cached(dir string) (string, bool) {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	if len(matches) != 1 {
		return "", false
	}
	return matches[0], true
}
