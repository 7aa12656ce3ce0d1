package wheels

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LockPython is the Python version whose pure-Python wheels lock hashes: RHEL 9's 3.9, the image's.
const LockPython = "3.9"

// LockFile recomputes the hashes in the requirements file from the index and rewrites the file when they
// changed (see Lock).
func (e Env) LockFile(ctx context.Context, pip Pip, progress io.Writer) error {
	data, err := os.ReadFile(e.Requirements)
	if err != nil {
		return fmt.Errorf("reading the Python requirements (WHEELS_REQUIREMENTS): %w", err)
	}
	locked, err := Lock(ctx, pip, e.Requirements, string(data), e.IndexURL, progress)
	if err != nil {
		return err
	}
	if locked == string(data) {
		fmt.Fprintf(progress, "wheels:lock: %s is up to date\n", e.Requirements)
		return nil
	}
	tmp := e.Requirements + ".lock-partial"
	if err := os.WriteFile(tmp, []byte(locked), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "wheels:lock: wrote new hashes to %s\n", e.Requirements)
	return os.Rename(tmp, e.Requirements)
}

// Lock recomputes the hashes of every pinned requirement in content and returns the file with each requirement's
// hashes replaced by those, keeping every other line as it was. The hashes are those of the files pip may install
// from: the sdist (which Konflux's prefetch takes) and the pure-Python wheel for LockPython, each when the index has
// one; pip download fetches them and refuses a file that disagrees with the hash the index advertises.
func Lock(ctx context.Context, pip Pip, file, content, indexURL string, progress io.Writer) (string, error) {
	reqs, err := parseForLock(file, content)
	if err != nil {
		return "", err
	}
	lines := strings.Split(content, "\n")
	var out []string
	next := 0
	for _, r := range reqs {
		if r.Hashes, err = lockHashes(ctx, pip, r, indexURL); err != nil {
			return "", err
		}
		out = append(out, lines[next:r.Line-1]...)
		out = append(out, strings.Split(r.Format(), "\n")...)
		next = r.LastLine
		fmt.Fprintf(progress, "wheels:lock: %s: %d files hashed\n", r, len(r.Hashes))
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n"), nil
}

// lockFormats are the two kinds of file a requirement may be installed from.
var lockFormats = [][]string{
	{"--no-binary", ":all:"},
	{"--only-binary", ":all:", "--python-version", LockPython, "--implementation", "py", "--abi", "none", "--platform", "any"},
}

// lockHashes downloads r's sdist and pure wheel with pip and returns their sorted sha256 digests.
func lockHashes(ctx context.Context, pip Pip, r Requirement, indexURL string) ([]string, error) {
	dir, err := os.MkdirTemp("", "wheels-lock-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, format := range lockFormats {
		args := append([]string{"download", "--no-deps", "--no-build-isolation", "--index-url", indexURL, "--dest", dir, r.String()}, format...)
		if out, err := pip.Run(ctx, args...); err != nil && !strings.Contains(out, "No matching distribution found") {
			return nil, fmt.Errorf("%s (line %d): %w", r, r.Line, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		return nil, fmt.Errorf("%s (line %d): the index %s has neither an sdist nor a pure-Python wheel of version %s", r, r.Line, indexURL, r.Version)
	}
	var hashes []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		hashes = append(hashes, hex.EncodeToString(sum[:]))
	}
	slices.Sort(hashes)
	return slices.Compact(hashes), nil
}

// parseForLock accepts pinned requirements that have no hash yet, which is what lock is for.
func parseForLock(file, content string) ([]Requirement, error) {
	const placeholder = " --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000"
	lines := strings.Split(content, "\n")
	patched := make([]string, len(lines))
	for i, l := range lines {
		patched[i] = l
		text := strings.TrimSpace(stripComment(l))
		if text != "" && !strings.HasPrefix(text, "-") && !strings.Contains(text, "--hash") && !strings.HasSuffix(text, `\`) &&
			(i == 0 || !strings.HasSuffix(strings.TrimSpace(stripComment(lines[i-1])), `\`)) {
			idx := commentIndex(l)
			if idx < 0 {
				idx = len(l)
			}
			patched[i] = strings.TrimRight(l[:idx], " \t") + placeholder + " " + l[idx:]
		}
	}
	return ParseRequirements(file, strings.Join(patched, "\n"))
}
