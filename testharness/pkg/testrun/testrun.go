// Package testrun plans and runs the project's test suites: go test in every module, and the suites of the
// other parts of the repository once they exist.
package testrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
	"github.com/openshift/aws-efs-csi/testharness/pkg/sysdeps"
)

// Suite is one test command run in one directory.
type Suite struct {
	// Name identifies the suite in progress lines and the summary.
	Name string
	// Dir is where the command runs, relative to the repository root.
	Dir string
	// Argv is the command line.
	Argv []string
	// Env is added to the environment of the command.
	Env []string
	// Requires lists what the suite needs from the system.
	Requires []sysdeps.Requirement
	// Prepare, when set, runs before the command (it builds what the suite needs) and returns environment
	// entries added for the command; its failure fails the suite without running the command.
	Prepare func(ctx context.Context, out io.Writer) ([]string, error)
}

// Options tunes a plan.
type Options struct {
	// GoTestFlags are added to every go test command line (GOTEST_FLAGS), e.g. "-run TestX -v".
	GoTestFlags []string
}

// raceNeeds is what `go test -race` needs: the race detector is cgo, so a C compiler.
var raceNeeds = []sysdeps.Requirement{{Package: "gcc", Command: "gcc"}}

// goNeeds is what the go test suite of module dir needs: the driver's end-to-end tests (driver/test/e2e) also run
// our mount.efs through real mount(8) and stunnel, and the operator's tests run our efs-utils with the endpoints its
// hook sets, so both need the efs-utils suite's packages; the magefiles
// tests build a stand-in sdist into a wheel and byte-compile efs-utils with the system Python; the testharness
// module's own unit tests need only the race detector.
func goNeeds(dir string) []sysdeps.Requirement {
	switch dir {
	case "driver":
		return append(append(append([]sysdeps.Requirement{}, raceNeeds...), pythonNeeds...), RealNFSNeeds...)
	case "operator":
		return append(append([]sysdeps.Requirement{}, raceNeeds...), pythonNeeds...)
	case "magefiles":
		return append(append([]sysdeps.Requirement{}, raceNeeds...), buildPythonNeeds...)
	}
	return raceNeeds
}

// RealNFSNeeds is what the real NFS of the data-path tests needs (driver/test/realnfs): nfs-ganesha with its VFS
// module as the server behind efs-standin's mount targets, and libnfs' nfs-ls as the client the mount.nfs4
// stand-in talks NFS with.
var RealNFSNeeds = []sysdeps.Requirement{
	{Package: "nfs-ganesha", File: "/usr/bin/ganesha.nfsd"},
	{Package: "nfs-ganesha-vfs", File: "/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so"},
	{Package: "libnfs-utils", Command: "nfs-ls"},
}

// buildPythonNeeds is what magefiles/pkg/wheels runs pip with (`pip wheel --no-build-isolation` of an sdist needs
// setuptools and wheel), as RHEL's RPMs provide them in the Containerfile.
var buildPythonNeeds = []sysdeps.Requirement{
	{Package: "python3", File: "/usr/bin/python3"},
	{Package: "python3-setuptools", PythonModule: "setuptools"},
	{Package: "python3-wheel", PythonModule: "wheel"},
	{Package: "python3-pip", PythonModule: "pip"},
}

// pythonNeeds is what the efs-utils suite needs: Debian's Python with pytest and the libraries RHEL ships as
// RPMs, and the real stunnel its end-to-end tests drive.
var pythonNeeds = []sysdeps.Requirement{
	{Package: "python3", File: "/usr/bin/python3"},
	{Package: "python3-pytest", PythonModule: "pytest"},
	{Package: "python3-cryptography", PythonModule: "cryptography"},
	{Package: "python3-botocore", PythonModule: "botocore"},
	{Package: "stunnel4", Command: "stunnel4"},
	{Package: "openssl", Command: "openssl"},
	{Package: "dpkg", Command: "dpkg-deb"}, // unpacks NewerBotocore
}

// Plan lists the suites of the repository at root: `go test -race ./...` in every go.work module (this harness's
// module among them), the efs-utils pytest suite, then the local cluster suite (it first builds the project's
// images for the cluster, ClusterImages, and finds them through clusterimages.ImagesDirEnv), then the stack suite
// (it installs OLM on its cluster and builds OLM's commands into the tool cache the first time).
//
// Every suite is part of the plan: a suite whose folder is missing is an error naming the folder, never a suite
// left out without a word, so that a move or a rename cannot make a run pass by running less.
func Plan(root string, opts Options) ([]Suite, error) {
	mods, err := workspace.Modules(root)
	if err != nil {
		return nil, err
	}
	if err := suiteFoldersExist(root); err != nil {
		return nil, err
	}
	var suites []Suite
	for _, m := range mods {
		argv := append([]string{"go", "test", "-race", "-timeout", "30m"}, opts.GoTestFlags...)
		suites = append(suites, Suite{
			Name:     "go " + m.Dir,
			Dir:      m.Dir,
			Argv:     append(argv, "./..."),
			Env:      []string{"CGO_ENABLED=1"},
			Requires: goNeeds(m.Dir),
		})
	}
	suites = append(suites, Suite{
		Name:     "pytest efs-utils",
		Dir:      ".",
		Argv:     []string{"/usr/bin/python3", "-m", "pytest", "-q", efsUtilsDir},
		Env:      []string{"PYTHONDONTWRITEBYTECODE=1"},
		Requires: pythonNeeds,
		Prepare:  newerBotocore,
	})
	// -v: a cluster suite runs for minutes; each subtest shows as it starts and with its time as it ends.
	argv := append([]string{"go", "test", "-race", "-tags", "cluster", "-timeout", "40m", "-v"}, opts.GoTestFlags...)
	suites = append(suites, Suite{
		Name:     "cluster " + clusterSuiteDir + "/" + strings.TrimPrefix(clusterSuitePackage, "./"),
		Dir:      clusterSuiteDir,
		Argv:     append(argv, clusterSuitePackage),
		Env:      []string{"CGO_ENABLED=1"},
		Requires: append(append(append([]sysdeps.Requirement{}, raceNeeds...), ClusterNeeds...), ClusterImagesNeeds...),
		Prepare:  clusterImages(root),
	})
	return append(suites, stackSuite(root, opts.GoTestFlags)), nil
}

// efsUtilsDir holds the efs-utils pytest suite, relative to the repository root.
const efsUtilsDir = "efs-utils"

// suiteFoldersExist fails, naming each one, when the folder of a suite beyond the go.work modules is missing.
func suiteFoldersExist(root string) error {
	var missing []string
	for _, dir := range []string{
		efsUtilsDir,
		filepath.Join(clusterSuiteDir, clusterSuitePackage),
		filepath.Join(clusterSuiteDir, stackSuitePackage),
	} {
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			missing = append(missing, dir)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("test plan: missing suite folder under %s: %s; every suite must run: restore it "+
			"(git checkout -- <folder>) or, when a suite moved, change its folder in testharness/pkg/testrun",
			root, strings.Join(missing, ", "))
	}
	return nil
}

// Requirements is the union of what the suites need, each requirement once.
func Requirements(suites []Suite) []sysdeps.Requirement {
	var all []sysdeps.Requirement
	seen := map[sysdeps.Requirement]bool{}
	for _, s := range suites {
		for _, r := range s.Requires {
			if !seen[r] {
				seen[r] = true
				all = append(all, r)
			}
		}
	}
	return all
}

// Describe writes the plan without running it: for each suite its name, the directory and command line, the
// environment it adds, the Debian packages it needs and whether it prepares something first (`testharness plan`).
func Describe(suites []Suite, out io.Writer) {
	for i, s := range suites {
		fmt.Fprintf(out, "[%d/%d] %s\n", i+1, len(suites), s.Name)
		fmt.Fprintf(out, "    in %s: %s\n", s.Dir, strings.Join(s.Argv, " "))
		if len(s.Env) > 0 {
			fmt.Fprintf(out, "    env: %s\n", strings.Join(s.Env, " "))
		}
		var pkgs []string
		for _, r := range s.Requires {
			if !slices.Contains(pkgs, r.Package) {
				pkgs = append(pkgs, r.Package)
			}
		}
		if len(pkgs) > 0 {
			fmt.Fprintf(out, "    needs: %s\n", strings.Join(pkgs, " "))
		}
		if s.Prepare != nil {
			fmt.Fprintf(out, "    prepares first: builds what it runs on\n")
		}
	}
	fmt.Fprintf(out, "%d suites\n", len(suites))
}

// Run runs every suite in order, streaming its output, and goes on after a failure so that one run reports every
// broken suite. It ends with a summary line and returns an error naming the suites that failed.
func Run(ctx context.Context, root string, suites []Suite, out io.Writer) error {
	var failed []string
	for i, s := range suites {
		fmt.Fprintf(out, "test: [%d/%d] %s: %s\n", i+1, len(suites), s.Name, strings.Join(s.Argv, " "))
		start := time.Now()
		env := s.Env
		if s.Prepare != nil {
			more, err := s.Prepare(ctx, out)
			if err != nil {
				fmt.Fprintf(out, "test: %s FAILED preparing after %s: %v\n", s.Name, time.Since(start).Round(time.Second), err)
				failed = append(failed, s.Name)
				if ctx.Err() != nil {
					break
				}
				continue
			}
			env = append(append([]string{}, env...), more...)
		}
		cmd := exec.CommandContext(ctx, s.Argv[0], s.Argv[1:]...)
		cmd.Dir = filepath.Join(root, s.Dir)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout = out
		cmd.Stderr = out
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(out, "test: %s FAILED after %s: %v\n", s.Name, time.Since(start).Round(time.Second), err)
			failed = append(failed, s.Name)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		fmt.Fprintf(out, "test: %s passed in %s\n", s.Name, time.Since(start).Round(time.Second))
	}
	fmt.Fprintf(out, "suites: %d passed, %d failed\n", len(suites)-len(failed), len(failed))
	if len(failed) > 0 {
		return fmt.Errorf("test suites failed: %s", strings.Join(failed, ", "))
	}
	return nil
}
