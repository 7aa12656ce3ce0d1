package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tool is a command of a module served by the Go module proxy, built with that module's own go.mod and go.sum
// (its replace directives included), as its release build does.
type Tool struct {
	// Name is the binary's name.
	Name string
	// Module and Version select the module (the proxy serves exact versions).
	Module, Version string
	// Package is the command's directory inside the module, e.g. ./cmd/csi-provisioner.
	Package string
	// VersionVar is the package variable set to Version with -X, when the command has one.
	VersionVar string
	// Tags are build tags its release build sets (e.g. opm's containers_image_openpgp, without which
	// containers/image needs gpgme through cgo).
	Tags []string
}

// BuildTool returns the path of t's binary in toolsDir/<name>-<version>/, building it first when it is missing
// (atomically and under a lock, as Build).
func BuildTool(ctx context.Context, toolsDir string, t Tool, log io.Writer) (string, error) {
	dir, err := buildCached(ctx, toolsDir, t.Name+"-"+t.Version, []string{t.Name}, t.Module+"@"+t.Version, log,
		func(ctx context.Context, work, out string, log io.Writer) error {
			return buildTool(ctx, t, work, out, log)
		})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, t.Name), nil
}

// buildTool copies the module's source from the module cache into work and builds the command there.
func buildTool(ctx context.Context, t Tool, work, out string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", t.Module+"@"+t.Version)
	cmd.Dir, cmd.Env = work, goEnv()
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go mod download %s@%s: %w", t.Module, t.Version, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(b, &info); err != nil || info.Dir == "" {
		return fmt.Errorf("go mod download %s@%s: no Dir in %q: %v", t.Module, t.Version, b, err)
	}
	src := filepath.Join(work, "src")
	if err := copyTree(info.Dir, src); err != nil {
		return fmt.Errorf("copying %s: %w", info.Dir, err)
	}
	ldflags := "-s -w"
	if t.VersionVar != "" {
		ldflags += " -X " + t.VersionVar + "=" + t.Version
	}
	args := []string{"build", "-trimpath", "-ldflags", ldflags}
	if len(t.Tags) > 0 {
		args = append(args, "-tags", strings.Join(t.Tags, ","))
	}
	return goCmd(ctx, src, log, append(args, "-o", filepath.Join(out, t.Name), t.Package)...)
}

// copyTree copies the regular files and directories under from to to, writable (the module cache is read-only).
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
