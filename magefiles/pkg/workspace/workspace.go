// Package workspace locates the repository root and the Go modules that go.work ties together.
package workspace

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// Root walks up from dir to the directory that holds go.work.
func Root(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work found in %s or any parent: run mage from inside the aws-efs-csi repository", abs)
		}
	}
}

// Module is one Go module of the workspace.
type Module struct {
	// Dir is the module directory relative to the root, e.g. "driver".
	Dir string
	// Path is the module path from its go.mod.
	Path string
}

// Modules returns the modules go.work uses, in the order go.work lists them.
func Modules(root string) ([]Module, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	work, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing go.work: %w", err)
	}
	var mods []Module
	for _, use := range work.Use {
		dir := filepath.Clean(use.Path)
		gomod := filepath.Join(root, dir, "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return nil, fmt.Errorf("go.work uses %s: %w", use.Path, err)
		}
		path := modfile.ModulePath(data)
		if path == "" {
			return nil, fmt.Errorf("%s has no module line", filepath.Join(dir, "go.mod"))
		}
		mods = append(mods, Module{Dir: dir, Path: path})
	}
	return mods, nil
}
