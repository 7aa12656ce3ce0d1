// Package sysdeps makes sure the system packages the test suites need are installed: as root on Debian it
// installs what is missing with apt-get; anywhere else it fails with the exact command to run.
package sysdeps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Requirement is one thing a test suite needs from the system and the Debian package that provides it.
// Exactly one of Command, File or PythonModule is set.
type Requirement struct {
	// Package is the Debian package that provides it.
	Package string
	// Command must be found on PATH.
	Command string
	// File must exist (for tools that live off PATH, such as /usr/sbin programs when PATH is minimal).
	File string
	// PythonModule must be importable by Python.
	PythonModule string
	// Python is the interpreter PythonModule is checked with; empty means /usr/bin/python3.
	Python string
}

// System is how requirements are checked and installed; tests replace it to exercise the decision logic.
type System struct {
	// Satisfied reports whether a requirement is met.
	Satisfied func(ctx context.Context, r Requirement) bool
	// CanInstall reports whether this process may install Debian packages itself (root on Debian with apt-get).
	CanInstall func() bool
	// Install runs the given command line.
	Install func(ctx context.Context, out io.Writer, argv []string) error
}

// Host is the real machine.
func Host() System {
	return System{Satisfied: satisfied, CanInstall: canInstall, Install: run}
}

// Ensure checks reqs and installs the packages of the missing ones where it can. It returns an error that names
// every missing piece and the command that installs them where it cannot.
func (s System) Ensure(ctx context.Context, out io.Writer, reqs []Requirement) error {
	missing := s.missingPackages(ctx, reqs)
	if len(missing) == 0 {
		return nil
	}
	install := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, missing...)
	if !s.CanInstall() {
		return fmt.Errorf("the tests need packages that are not installed: %s\n  on Debian run: sudo apt-get update && sudo %s\n  elsewhere install the equivalent packages",
			strings.Join(missing, ", "), strings.Join(install, " "))
	}
	fmt.Fprintf(out, "test: installing %s\n", strings.Join(missing, " "))
	if err := s.Install(ctx, out, []string{"apt-get", "update", "-q"}); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	if err := s.Install(ctx, out, install); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(install, " "), err)
	}
	if still := s.missingPackages(ctx, reqs); len(still) > 0 {
		return fmt.Errorf("installed %s but still missing what they provide: %s", strings.Join(missing, ", "), strings.Join(still, ", "))
	}
	return nil
}

func (s System) missingPackages(ctx context.Context, reqs []Requirement) []string {
	set := map[string]bool{}
	for _, r := range reqs {
		if !s.Satisfied(ctx, r) {
			set[r.Package] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func satisfied(ctx context.Context, r Requirement) bool {
	switch {
	case r.Command != "":
		_, err := exec.LookPath(r.Command)
		return err == nil
	case r.File != "":
		_, err := os.Stat(r.File)
		return err == nil
	case r.PythonModule != "":
		python := r.Python
		if python == "" {
			python = "/usr/bin/python3"
		}
		return exec.CommandContext(ctx, python, "-c", "import "+r.PythonModule).Run() == nil
	}
	return false
}

func canInstall() bool {
	if os.Geteuid() != 0 {
		return false
	}
	if _, err := os.Stat("/etc/debian_version"); err != nil {
		return false
	}
	_, err := exec.LookPath("apt-get")
	return err == nil
}

// policyRCD is Debian's hook that invoke-rc.d asks before it starts a service (policy-rc.d(8)); exit status 101
// means "not allowed".
const policyRCD = "/usr/sbin/policy-rc.d"

// run runs argv with apt-get's non-interactive front end. While it runs, packages' services are not started (a
// policy-rc.d that denies, when the machine has none of its own): the suites start the servers they need
// themselves, on their own ports (rpcbind, which nfs-ganesha pulls in, would otherwise start and stay).
func run(ctx context.Context, out io.Writer, argv []string) error {
	if f, err := os.OpenFile(policyRCD, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755); err == nil {
		_, werr := f.WriteString("#!/bin/sh\n# written by the project's test runner while it installs packages\nexit 101\n")
		if cerr := f.Close(); werr != nil || cerr != nil {
			fmt.Fprintf(out, "test: services of the installed packages may start: writing %s: %v %v\n", policyRCD, werr, cerr)
		}
		defer os.Remove(policyRCD)
	} else if !errors.Is(err, fs.ErrExist) {
		fmt.Fprintf(out, "test: services of the installed packages may start: %v\n", err)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout = out
	cmd.Stderr = out
	return cmd.Run()
}
