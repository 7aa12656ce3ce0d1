package efsutils

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/klog/v2"
)

// Dirs are the places efs-utils state and configuration live on a node.
type Dirs struct {
	// ConfigDir is the preferred config directory, a hostPath (/var/amazon/efs).
	ConfigDir string
	// LegacyDir is the host's old /etc/amazon/efs mounted elsewhere (/etc/amazon/efs-legacy); used when it already
	// holds efs-utils.conf, so that the node keeps its private key and the mounts made with it.
	LegacyDir string
	// LinkPath is where efs-utils looks (/etc/amazon/efs); it becomes a symbolic link to the chosen directory.
	LinkPath string
	// StaticDir holds the image's copy of efs-utils.crt and the shipped configuration.
	StaticDir string
	// StateDir is the efs-utils state directory (/var/run/efs).
	StateDir string
}

// ConfFile is the name of the efs-utils configuration in the config directory.
const ConfFile = "efs-utils.conf"

// alwaysCopied are static files replaced at every start (the CA bundle may change between images).
var alwaysCopied = map[string]bool{"efs-utils.crt": true}

// Setup prepares a node for efs-utils: chooses the config directory, copies the static files, writes conf as
// efs-utils.conf, points LinkPath at the directory and strips "libwrap = no" from old relay configs. It returns
// the chosen directory.
func Setup(d Dirs, conf []byte) (string, error) {
	dir := ChooseConfigDir(d)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("efs-utils config directory %s: %w", dir, err)
	}
	if d.StaticDir != "" {
		if err := CopyStatic(d.StaticDir, dir); err != nil {
			return "", err
		}
	}
	if err := writeAtomic(filepath.Join(dir, ConfFile), conf, 0o644); err != nil {
		return "", err
	}
	if err := Link(d.LinkPath, dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(d.StateDir, 0o750); err != nil {
		return "", fmt.Errorf("efs-utils state directory %s: %w", d.StateDir, err)
	}
	n, err := StripLibwrap(d.StateDir)
	if err != nil {
		return "", err
	}
	klog.V(2).InfoS("efs-utils prepared", "configDir", dir, "link", d.LinkPath, "relayConfigsRepaired", n)
	return dir, nil
}

// ChooseConfigDir returns LegacyDir when it already holds efs-utils.conf (a node upgraded from a driver that kept
// its configuration in the host's /etc/amazon/efs), else ConfigDir.
func ChooseConfigDir(d Dirs) string {
	if d.LegacyDir != "" {
		if st, err := os.Stat(filepath.Join(d.LegacyDir, ConfFile)); err == nil && st.Mode().IsRegular() {
			return d.LegacyDir
		}
	}
	return d.ConfigDir
}

// Link makes link a symbolic link to dir, replacing an older link atomically. An existing empty directory is
// replaced; a non-empty one is refused, since it may hold a node key that mounts depend on.
func Link(link, dir string) error {
	if filepath.Clean(link) == filepath.Clean(dir) {
		return nil
	}
	if cur, err := os.Readlink(link); err == nil && cur == dir {
		return nil
	}
	if st, err := os.Lstat(link); err == nil && st.IsDir() {
		if err := os.Remove(link); err != nil {
			return fmt.Errorf("efs-utils config link %s is a non-empty directory: move its files to %s or point the link flag elsewhere: %w", link, dir, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return fmt.Errorf("efs-utils config link %s: %w", link, err)
	}
	tmp := link + ".tmp-link"
	_ = os.Remove(tmp)
	if err := os.Symlink(dir, tmp); err != nil {
		return fmt.Errorf("efs-utils config link %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("efs-utils config link %s: %w", link, err)
	}
	return nil
}

// CopyStatic copies the regular files of static into dir: efs-utils.crt always, the rest only when missing
// (efs-utils.conf is rendered, never copied).
func CopyStatic(static, dir string) error {
	entries, err := os.ReadDir(static)
	if errors.Is(err, fs.ErrNotExist) {
		klog.InfoS("No efs-utils static files directory; nothing to copy", "path", static)
		return nil
	}
	if err != nil {
		return fmt.Errorf("efs-utils static files %s: %w", static, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == ConfFile {
			continue
		}
		dst := filepath.Join(dir, e.Name())
		if _, err := os.Stat(dst); err == nil && !alwaysCopied[e.Name()] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(static, e.Name()))
		if err != nil {
			return fmt.Errorf("efs-utils static file: %w", err)
		}
		if err := writeAtomic(dst, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// StripLibwrap removes "libwrap = no" lines from the stunnel-config.* files in stateDir (written by older
// efs-utils for a stunnel that knew the option; newer stunnel refuses to start with it). It returns how many
// files it changed.
func StripLibwrap(stateDir string) (int, error) {
	paths, err := filepath.Glob(filepath.Join(stateDir, "stunnel-config.*"))
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return changed, fmt.Errorf("relay config %s: %w", p, err)
		}
		var out bytes.Buffer
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "libwrap" && strings.TrimSpace(v) == "no" {
				continue
			}
			out.WriteString(line)
		}
		if out.Len() == len(b) {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return changed, err
		}
		if err := writeAtomic(p, out.Bytes(), st.Mode().Perm()); err != nil {
			return changed, err
		}
		changed++
	}
	return changed, nil
}

// writeAtomic writes b to path through a temporary file in the same directory.
func writeAtomic(path string, b []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, bytes.NewReader(b)); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
