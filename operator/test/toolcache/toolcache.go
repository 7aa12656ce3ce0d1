// Package toolcache is the one home of the tool cache that every worktree and every test run shares: where it is
// and how concurrent builders of one entry take turns. The local cluster's Kubernetes binaries
// (operator/test/e2e/cluster) and the test harness's Debian stand-in root (testharness/pkg/standinroot) both live
// there; the package depends on the standard library only, so that the testharness module can import it without
// taking on the operator's dependencies.
package toolcache

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// DirEnv overrides where built tools are cached (Dir).
const DirEnv = "AWS_EFS_CSI_TOOLS_DIR"

// Dir is the cache of built tools, outside any clone so that every worktree and every run shares it:
// $AWS_EFS_CSI_TOOLS_DIR when set, else ${XDG_CACHE_HOME:-$HOME/.cache}/aws-efs-csi/tools.
func Dir(getenv func(string) string) (string, error) {
	if d := getenv(DirEnv); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("%s %q: want an absolute directory", DirEnv, d)
		}
		return d, nil
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		home := getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("neither %s, XDG_CACHE_HOME nor HOME is set: cannot choose a tool cache", DirEnv)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "aws-efs-csi", "tools"), nil
}

// Lock takes an exclusive flock on path (created when missing), waiting while another process holds it, for
// example while it builds the entry the lock guards; it says so on log, naming who waits. The returned function
// releases the lock. A cancelled ctx ends the wait with ctx's error; the lock is not held then.
func Lock(ctx context.Context, path, who string, log io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(log, "%s: waiting for another build holding %s\n", who, path)
		done := make(chan error, 1)
		go func() { done <- syscall.Flock(fd, syscall.LOCK_EX) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			// Closing f now would race with the blocked flock (which keeps waiting anyway: close does not
			// interrupt it). Let the wait end on its own, then close, which drops a lock it may have taken.
			go func() { <-done; f.Close() }()
			return nil, ctx.Err()
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
	}
	return func() { f.Close() }, nil
}
