// Package verify checks that the Go sources are formatted and vetted, that module and workspace files are
// exactly what `go mod tidy` and `go work sync` would write, and that the release tooling does not compile the test
// harness.
package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// Check is one verification; it returns an error that names the offending files.
type Check struct {
	Name string
	Run  func(ctx context.Context, goBin, root string, mods []workspace.Module) error
}

// Checks lists every verification in the order they run.
func Checks() []Check {
	return []Check{
		{Name: "gofmt", Run: gofmt},
		{Name: "go vet", Run: vet},
		{Name: "go mod tidy", Run: tidy},
		{Name: "go work sync", Run: workSync},
		{Name: "harness boundary", Run: harnessBoundary},
	}
}

// Run runs every check, goes on after failures so one run lists every problem, and joins the errors.
func Run(ctx context.Context, root string, checks []Check, out io.Writer) error {
	goBin, err := toolchain.Find("go", "verify the Go modules")
	if err != nil {
		return err
	}
	mods, err := workspace.Modules(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range checks {
		if err := c.Run(ctx, goBin, root, mods); err != nil {
			fmt.Fprintf(out, "verify: %s FAILED\n", c.Name)
			errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
			continue
		}
		fmt.Fprintf(out, "verify: %s ok\n", c.Name)
	}
	return errors.Join(errs...)
}

func gofmt(ctx context.Context, goBin, root string, mods []workspace.Module) error {
	gofmtBin := filepath.Join(filepath.Dir(goBin), "gofmt")
	var bad []string
	for _, m := range mods {
		out, err := toolchain.Output(ctx, root, nil, gofmtBin, "-l", m.Dir)
		if err != nil {
			return err
		}
		bad = append(bad, strings.Fields(out)...)
	}
	if len(bad) > 0 {
		return fmt.Errorf("not gofmt-formatted (run gofmt -w on them): %s", strings.Join(bad, " "))
	}
	return nil
}

func vet(ctx context.Context, goBin, root string, mods []workspace.Module) error {
	var errs []error
	for _, m := range mods {
		args := []string{"vet"}
		if m.Dir == "magefiles" {
			args = append(args, "-tags", "mage") // the mage targets carry the mage build tag
		}
		if _, err := toolchain.Output(ctx, filepath.Join(root, m.Dir), nil, goBin, append(args, "./...")...); err != nil {
			errs = append(errs, fmt.Errorf("module %s: %w", m.Dir, err))
		}
	}
	return errors.Join(errs...)
}

func tidy(ctx context.Context, goBin, root string, mods []workspace.Module) error {
	var untidy []string
	for _, m := range mods {
		if _, err := toolchain.Output(ctx, filepath.Join(root, m.Dir), nil, goBin, "mod", "tidy", "-diff"); err != nil {
			untidy = append(untidy, filepath.Join(m.Dir, "go.mod"))
		}
	}
	if len(untidy) > 0 {
		return fmt.Errorf("go mod tidy would change (run it in their modules): %s", strings.Join(untidy, " "))
	}
	return nil
}

// workSync runs `go work sync`, lists the files it changed and puts every file back as it was, since verify must
// not edit the tree.
func workSync(ctx context.Context, goBin, root string, mods []workspace.Module) error {
	files := []string{"go.work", "go.work.sum"}
	for _, m := range mods {
		files = append(files, filepath.Join(m.Dir, "go.mod"), filepath.Join(m.Dir, "go.sum"))
	}
	before := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		before[f] = data // nil for a file that does not exist
	}
	_, syncErr := toolchain.Output(ctx, root, nil, goBin, "work", "sync")
	var changed []string
	for _, f := range files {
		path := filepath.Join(root, f)
		after, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		if bytes.Equal(after, before[f]) {
			continue
		}
		changed = append(changed, f)
		if before[f] == nil {
			err = os.Remove(path)
		} else {
			err = os.WriteFile(path, before[f], 0o644)
		}
		if err != nil {
			return fmt.Errorf("restoring %s after go work sync: %w", f, err)
		}
	}
	if syncErr != nil {
		return syncErr
	}
	if len(changed) > 0 {
		return fmt.Errorf("go work sync would change (run it at the repository root): %s", strings.Join(changed, " "))
	}
	return nil
}
