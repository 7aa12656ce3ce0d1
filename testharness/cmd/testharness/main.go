// Command testharness runs the project's test suites and the local cluster. `go tool mage test` and the cluster:
// targets run it as a subprocess, at the repository root, so that the magefile, which every image's builder stage
// compiles, never compiles the harness or its dependencies. It can also be run by hand:
//
//	go run ./testharness/cmd/testharness test|plan|cluster up|cluster images|cluster stack|cluster down
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
	"github.com/openshift/aws-efs-csi/testharness/pkg/clusterimages"
	"github.com/openshift/aws-efs-csi/testharness/pkg/sysdeps"
	"github.com/openshift/aws-efs-csi/testharness/pkg/testrun"
)

const usage = `usage: testharness <command>
  test            install the suites' system packages, then run every suite (GOTEST_FLAGS adds go test flags)
  plan            print the suites test would run, with their commands and system packages, and run nothing
  cluster up      build the project's images for the cluster, start the local cluster and leave it running
  cluster images  build the project's images for the local cluster and print the variable that names them
  cluster stack   prepare the stack suite (images, bundle, catalog) and print the variables it reads
  cluster down    stop the local cluster and remove what it made`

// errUsage marks a command line the harness does not know; main exits 2 for it.
var errUsage = errors.New(usage)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testharness:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run carries out one command line in the repository that holds the working directory.
func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	verb := strings.Join(args, " ")
	switch verb {
	case "test", "plan", "cluster up", "cluster images", "cluster stack", "cluster down":
	default:
		return fmt.Errorf("%w\nunknown command %q", errUsage, verb)
	}
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	host := sysdeps.Host()
	switch verb {
	case "test", "plan":
		suites, err := testrun.Plan(root, testrun.Options{GoTestFlags: strings.Fields(getenv("GOTEST_FLAGS"))})
		if err != nil {
			return err
		}
		if verb == "plan" {
			testrun.Describe(suites, out)
			return nil
		}
		if err := host.Ensure(ctx, out, testrun.Requirements(suites)); err != nil {
			return err
		}
		return testrun.Run(ctx, root, suites, out)
	case "cluster up":
		if err := host.Ensure(ctx, out, append(append([]sysdeps.Requirement{}, testrun.ClusterNeeds...), testrun.ClusterImagesNeeds...)); err != nil {
			return err
		}
		dir, err := testrun.ClusterImages(ctx, root, getenv, out)
		if err != nil {
			return err
		}
		return runAt(ctx, root, out, testrun.LocalClusterArgv(root, "up"), clusterimages.ImagesDirEnv+"="+dir)
	case "cluster images":
		if err := host.Ensure(ctx, out, testrun.ClusterImagesNeeds); err != nil {
			return err
		}
		dir, err := testrun.ClusterImages(ctx, root, getenv, out)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "cluster images: export %s=%s\n", clusterimages.ImagesDirEnv, dir)
		return nil
	case "cluster stack":
		if err := host.Ensure(ctx, out, testrun.StackNeeds); err != nil {
			return err
		}
		env, err := testrun.PrepareStack(ctx, root, getenv, out)
		if err != nil {
			return err
		}
		for _, e := range env {
			fmt.Fprintf(out, "export %s\n", e)
		}
		return nil
	default: // cluster down
		return runAt(ctx, root, out, testrun.LocalClusterArgv(root, "down"))
	}
}

func runAt(ctx context.Context, dir string, out io.Writer, argv []string, env ...string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	return cmd.Run()
}
