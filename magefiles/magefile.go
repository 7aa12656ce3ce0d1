//go:build mage

// Build, test and verify the AWS EFS CSI stack for OpenShift. Every target is a thin wrapper over a tested
// package under magefiles/internal; run them from the repository root as `go tool mage <target>`.
package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/magefile/mage/mg"

	"github.com/openshift/aws-efs-csi/magefiles/internal/gobuild"
	"github.com/openshift/aws-efs-csi/magefiles/internal/platform"
	"github.com/openshift/aws-efs-csi/magefiles/internal/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/internal/sysdeps"
	"github.com/openshift/aws-efs-csi/magefiles/internal/testrun"
	"github.com/openshift/aws-efs-csi/magefiles/internal/verify"
	"github.com/openshift/aws-efs-csi/magefiles/internal/workspace"
)

// Default is what a bare `go tool mage` runs.
var Default = All

// All runs the main job: everything a release engineer builds (today: Build).
func All(ctx context.Context) {
	mg.CtxDeps(ctx, Build)
}

// Build cross-compiles aws-efs-csi-driver and aws-efs-csi-driver-operator into _output/bin/<os>_<arch>/.
// Binaries are static, built with -trimpath and no build ID, so one commit always gives byte-identical files;
// each is stamped with its module's version (tag driver/vX.Y.Z or operator/vX.Y.Z at HEAD, else the module's
// VERSION file), the commit and a dirty flag, which --version prints; unchanged binaries are not recompiled.
// Environment: PLATFORMS=os/arch[,os/arch...] narrows the platforms (default all of linux/amd64, linux/arm64,
// linux/ppc64le, linux/s390x); BUILD_JOBS=N bounds the parallel compiles (default the number of CPUs).
func Build(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	platforms, err := platform.Parse(os.Getenv("PLATFORMS"))
	if err != nil {
		return err
	}
	jobs, err := gobuild.ParseJobs(os.Getenv("BUILD_JOBS"), runtime.NumCPU())
	if err != nil {
		return err
	}
	programs := gobuild.Programs()
	stamps := map[string]stamp.Stamp{}
	for _, p := range programs {
		if stamps[p.Module], err = stamp.Resolve(ctx, root, p.Module); err != nil {
			return err
		}
	}
	_, err = gobuild.Build(ctx, gobuild.Options{
		Root:      root,
		OutDir:    filepath.Join(root, "_output", "bin"),
		Programs:  programs,
		Platforms: platforms,
		Stamps:    stamps,
		Jobs:      jobs,
		Progress:  os.Stdout,
	})
	return err
}

// Test runs every test suite: go test with the race detector in each Go module, then the efs-utils pytest suite.
// It first installs the system packages the suites need when it runs as root on Debian (apt-get); anywhere else
// it stops and prints the exact apt-get command. Every suite runs even after a failure, and the last line counts
// the suites that passed and failed. Environment: GOTEST_FLAGS adds flags to every go test run, e.g.
// GOTEST_FLAGS="-run TestSanity -v" or GOTEST_FLAGS=-count=1.
func Test(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	suites, err := testrun.Plan(root, testrun.Options{GoTestFlags: strings.Fields(os.Getenv("GOTEST_FLAGS"))})
	if err != nil {
		return err
	}
	if err := sysdeps.Host().Ensure(ctx, os.Stdout, testrun.Requirements(suites)); err != nil {
		return err
	}
	return testrun.Run(ctx, root, suites, os.Stdout)
}

// Verify checks gofmt, go vet, that go mod tidy and go work sync leave no diff, and names every offending file.
// It never edits the tree: files that go work sync touches are put back after the comparison.
func Verify(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	return verify.Run(ctx, root, verify.Checks(), os.Stdout)
}
