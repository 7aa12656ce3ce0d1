// Package harness runs the test harness (the testharness module's command) as a subprocess. The magefile never
// imports the harness: every image's builder stage compiles the magefile and everything it imports, and the
// harness (the local cluster, its images, the suites and their system packages) is no part of a release.
package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
)

// Package is the harness command, built through the workspace (go.work) of the repository.
const Package = "github.com/openshift/aws-efs-csi/testharness/cmd/testharness"

// Binary is where Run builds the harness command in the repository at root.
func Binary(root string) string { return filepath.Join(root, "_output", "testharness", "testharness") }

// stopGrace is how long a cancelled harness has, after its interrupt, to stop its suites and clean up before it is
// killed.
const stopGrace = 30 * time.Second

// Run builds the harness command into Binary(root) and runs it at root with args (for example "test", or
// "cluster", "up"), streaming its output to stdout and stderr, with this process's environment. The command is
// built and then run, rather than `go run`, so that cancelling ctx interrupts the harness itself (go run does not
// pass signals on): it gets os.Interrupt and stopGrace to stop its suites before it is killed.
func Run(ctx context.Context, root string, args []string, stdout, stderr io.Writer) error {
	goBin, err := toolchain.Find("go", "build the test harness")
	if err != nil {
		return err
	}
	bin := Binary(root)
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, Package)
	build.Dir, build.Stdout, build.Stderr = root, stdout, stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the test harness (go build -o %s %s in %s): %w", bin, Package, root, err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = stopGrace
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testharness %s: %w", strings.Join(args, " "), err)
	}
	return nil
}
