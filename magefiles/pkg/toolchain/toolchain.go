// Package toolchain finds and runs the external programs the build depends on, and says how to get them when
// they are missing.
package toolchain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrMissing is returned, wrapped, when a required program is not installed.
var ErrMissing = errors.New("required program not found")

// installHints maps a program to the command that installs it on Debian and RHEL-like systems.
var installHints = map[string]string{
	"git":     "apt-get install -y git (Debian) or dnf install -y git (RHEL)",
	"gcc":     "apt-get install -y gcc (Debian) or dnf install -y gcc (RHEL)",
	"go":      "install Go 1.26 from https://go.dev/dl and put its bin directory on PATH",
	"python3": "apt-get install -y python3 (Debian) or dnf install -y python3 (RHEL)",
}

// Find returns the absolute path of program, or an error naming it, why it is needed and how to install it.
// go is also looked for in $GOROOT/bin, so a toolchain that is not on PATH but runs `go tool mage` still works.
func Find(program, neededFor string) (string, error) {
	if path, err := exec.LookPath(program); err == nil {
		return path, nil
	}
	if program == "go" {
		if root := os.Getenv("GOROOT"); root != "" {
			candidate := filepath.Join(root, "bin", "go")
			if _, err := os.Stat(candidate); err == nil {
				return candidate, nil
			}
		}
	}
	hint := installHints[program]
	if hint == "" {
		hint = "install it and put it on PATH"
	}
	return "", fmt.Errorf("%w: %q is needed to %s: %s", ErrMissing, program, neededFor, hint)
}

// Output runs program with args in dir and returns its trimmed standard output. On failure the error carries the
// command line and its standard error, so that the caller's message explains itself.
func Output(ctx context.Context, dir string, env []string, program string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s (in %s): %w: %s", filepath.Base(program), strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}
