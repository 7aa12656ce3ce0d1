// Package pycompile byte-compiles the Python modules of an image layer ahead of time. The driver's node container
// runs with readOnlyRootFilesystem, so without shipped bytecode every mount.efs run would compile its modules again
// (and could not cache them). The .pyc files are hash-based and unchecked (PEP 552): their header holds a hash of
// the source instead of its modification time, so the same sources give the same bytes, and the interpreter loads
// them without looking at the source. Bytecode is specific to a Python minor version, so it is compiled by an
// interpreter of the image's version.
package pycompile

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
)

// Interpreter finds python3.<minor> on PATH, the interpreter whose bytecode a base with Python 3.<minor> loads.
func Interpreter(minor int) (string, error) {
	name := fmt.Sprintf("python3.%d", minor)
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("byte-compiling efs-utils for the base's Python 3.%d needs %s on PATH (bytecode is specific to the minor version): install it (Debian and Fedora package %s): %w", minor, name, name, err)
	}
	return p, nil
}

// Bytecode compiles every .py file among entries with python and returns one entry per compiled module,
// <dir>/__pycache__/<module>.<tag>.pyc, mode 0644, whose code objects name the in-image source path.
func Bytecode(ctx context.Context, python string, entries []layer.Entry) ([]layer.Entry, error) {
	tmp, err := os.MkdirTemp("", "pycompile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var sources []string
	for _, e := range entries {
		p := layer.Clean(e.Path)
		if e.Kind != layer.File || !strings.HasSuffix(p, ".py") {
			continue
		}
		data := e.Data
		if e.Source != "" {
			if data, err = os.ReadFile(e.Source); err != nil {
				return nil, err
			}
		}
		dest := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dest, data, 0o644); err != nil {
			return nil, err
		}
		sources = append(sources, dest)
	}
	if len(sources) == 0 {
		return nil, nil
	}
	args := append([]string{"-m", "compileall", "-q", "-f", "--invalidation-mode", "unchecked-hash", "-s", tmp, "-p", "/"}, sources...)
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PYTHONHASHSEED=0", "LC_ALL=C.UTF-8", "PYTHONNOUSERSITE=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s -m compileall: %v\n%s", python, err, strings.TrimSpace(string(out)))
	}
	var out []layer.Entry
	err = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".pyc") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		out = append(out, layer.Entry{Path: filepath.ToSlash(rel), Kind: layer.File, Mode: 0o644, Data: data})
		return nil
	})
	return out, err
}
