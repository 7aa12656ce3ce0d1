package sysdeps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Deb is one Debian binary package taken from the archive by exact version and sha256, and unpacked rather than
// installed: a newer version than the machine's suite ships, for one suite alone (on its PYTHONPATH, say), while
// the system keeps its own.
type Deb struct {
	// Package, Version and Arch name the file pool/main/<Pool>/<Package>_<Version>_<Arch>.deb.
	Package, Version, Arch string
	// Pool is the source package's directory under pool/main, e.g. "p/python-botocore".
	Pool string
	// SHA256 is the hex digest of the .deb; a download with another digest is refused.
	SHA256 string
}

// MirrorEnv names the Debian archive Unpack downloads from; DefaultMirror when unset.
const MirrorEnv = "DEBIAN_MIRROR"

// DefaultMirror is Debian's CDN. Plain HTTP is what apt uses too: the pinned sha256, not the transport, makes the
// file trusted.
const DefaultMirror = "http://deb.debian.org/debian"

// URL is where the .deb is in the archive at mirror.
func (d Deb) URL(mirror string) string {
	return fmt.Sprintf("%s/pool/main/%s/%s_%s_%s.deb", strings.TrimSuffix(mirror, "/"), d.Pool, d.Package, d.Version, d.Arch)
}

// Unpack returns dir/<package>_<version>, holding the package's files (dpkg-deb -x), downloading the .deb from
// mirror and checking its sha256 the first time; later calls use the directory without the network. The files are
// unpacked into a temporary directory renamed into place, so an interrupted run leaves nothing half-made.
func Unpack(ctx context.Context, d Deb, mirror, dir string, log io.Writer) (string, error) {
	out := filepath.Join(dir, d.Package+"_"+d.Version)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	dpkgDeb, err := exec.LookPath("dpkg-deb")
	if err != nil {
		return "", fmt.Errorf("unpacking %s %s needs dpkg-deb (Debian package dpkg): %w", d.Package, d.Version, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".unpack-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "package.deb")
	url := d.URL(mirror)
	fmt.Fprintf(log, "test: downloading %s\n", url)
	if err := download(ctx, url, file, d.SHA256); err != nil {
		return "", fmt.Errorf("%s %s: %w", d.Package, d.Version, err)
	}
	root := filepath.Join(tmp, "root")
	if data, err := exec.CommandContext(ctx, dpkgDeb, "-x", file, root).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb -x %s: %w: %s", url, err, strings.TrimSpace(string(data)))
	}
	if err := os.Rename(root, out); err != nil {
		if _, statErr := os.Stat(out); statErr == nil { // unpacked at the same time by another run
			return out, nil
		}
		return "", err
	}
	return out, nil
}

// download writes url to file when its sha256 is want.
func download(ctx context.Context, url, file, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s has sha256 %s, want the pinned %s: refusing it", url, got, want)
	}
	return f.Close()
}
