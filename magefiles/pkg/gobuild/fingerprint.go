package gobuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// treeDigest hashes every file under dir that can affect a build of the module: sources, go.mod, go.sum and
// embedded assets. Tests, testdata and hidden directories are left out, so editing a test does not rebuild the
// binaries. Names are hashed with contents and modes, in sorted order, so the digest depends only on content.
func treeDigest(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing the sources under %s: %w", dir, err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		info, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%o\x00", filepath.ToSlash(rel), info.Mode().Perm()&0o111)
		if err := hashFile(h, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileDigest is the hex sha256 of one file's content.
func fileDigest(path string) (string, error) {
	h := sha256.New()
	if err := hashFile(h, path); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// combine hashes an ordered list of labelled values into one digest.
func combine(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// record is what the fingerprint file beside each binary holds: the digest of the inputs that produced it and the
// digest of the binary itself, so a binary replaced or truncated behind mage's back is rebuilt too.
type record struct {
	Inputs string
	Output string
}

func readRecord(path string) (record, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return record{}, false
	}
	var r record
	if _, err := fmt.Sscanf(string(data), "inputs %s\noutput %s\n", &r.Inputs, &r.Output); err != nil {
		return record{}, false
	}
	return r, true
}

func writeRecord(path string, r record) error {
	return os.WriteFile(path, []byte(fmt.Sprintf("inputs %s\noutput %s\n", r.Inputs, r.Output)), 0o644)
}
