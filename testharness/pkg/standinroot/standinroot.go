// Package standinroot makes the Debian root file system that stands in for RHEL 9 under the project's images in
// the local cluster: Red Hat's base images cannot be pulled here, so mmdebstrap installs from Debian the packages
// the efs-utils base's Containerfile installs from RHEL (python3, python3-cryptography, stunnel, nfs-utils, ...)
// and lays the trust store out as RHEL 9 does, so that the CA bundle OpenShift mounts over
// /etc/pki/ca-trust/extracted/pem is what Go, OpenSSL and Python trust. The tarball is the form the images
// target's `rootfs:` base reads. It is built once per key (suite, mirrors, packages, options and the trust-store
// hook) into the tool cache outside the clone (operator/test/toolcache), atomically and under its lock.
package standinroot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/openshift/aws-efs-csi/operator/test/toolcache"
)

// Spec says what mmdebstrap builds.
type Spec struct {
	// Suite is the Debian release, e.g. "bookworm".
	Suite string
	// Mirrors are sources.list lines.
	Mirrors []string
	// Packages are installed on top of the Essential set (--variant=essential).
	Packages []string
	// Options are further mmdebstrap options (dpkg path excludes, skips).
	Options []string
	// Hook is a shell script run as mmdebstrap's customize hook with the root directory as $1.
	Hook string
}

// RHELPackages maps each RPM the `runtime` stage of images/aws-efs-utils-base/Containerfile installs to its Debian
// equivalent in the stand-in; every RPM there has one. Debian splits util-linux's mount(8) into its own package.
var RHELPackages = []struct{ RPM, Deb string }{
	{"python3", "python3"},
	{"python3-pip", "python3-pip"},
	{"python3-cryptography", "python3-cryptography"},
	{"python3-jmespath", "python3-jmespath"},
	{"python3-dateutil", "python3-dateutil"},
	{"python3-urllib3", "python3-urllib3"},
	{"python3-six", "python3-six"},
	{"stunnel", "stunnel4"},
	{"nfs-utils", "nfs-common"},
	{"util-linux", "util-linux"},
	{"util-linux", "mount"},
	{"openssl", "openssl"},
	{"which", "debianutils"},
}

// standInOnly are packages the stand-in installs that the RHEL image gets another way: botocore is a wheel built
// from its pinned sdist there (PyPI is not reachable here, so Debian's python3-botocore stands in, in
// /usr/lib/python3/dist-packages), and ca-certificates is part of RHEL's base image.
var standInOnly = []string{"python3-botocore", "ca-certificates"}

// TrustStoreHook turns Debian's trust store into RHEL 9's layout. The bundle moves to
// /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem, the file library-go's CA-bundle hooks replace by mounting
// the trusted CA ConfigMap over that directory; every name a program looks up leads to it through symlinks:
//
//   - /etc/pki/tls/certs/ca-bundle.crt (RHEL's name, Go's second candidate) and /etc/pki/tls/cert.pem;
//   - /etc/ssl/certs → ../pki/tls/certs, as on RHEL, so Debian's /etc/ssl/certs/ca-certificates.crt (Go's first
//     candidate, OpenSSL's default CA file via /usr/lib/ssl/cert.pem, Debian's certifi.where()) is the same file;
//   - the per-certificate hash links of /etc/ssl/certs go away, so OpenSSL's CA directory and Go's directory scan
//     add nothing the mounted bundle does not hold.
const TrustStoreHook = `set -eu
r="$1"
mkdir -p "$r/etc/pki/ca-trust/extracted/pem" "$r/etc/pki/tls/certs"
mv "$r/etc/ssl/certs/ca-certificates.crt" "$r/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"
rm -rf "$r/etc/ssl/certs"
ln -s ../pki/tls/certs "$r/etc/ssl/certs"
ln -s ../../ca-trust/extracted/pem/tls-ca-bundle.pem "$r/etc/pki/tls/certs/ca-bundle.crt"
ln -s ca-bundle.crt "$r/etc/pki/tls/certs/ca-certificates.crt"
ln -s certs/ca-bundle.crt "$r/etc/pki/tls/cert.pem"
`

// Default is the stand-in for RHEL 9: Debian bookworm (the suite of this machine) with the Debian equivalents of
// the efs-utils runtime RPMs, without documentation, and without /dev nodes (the runtime provides /dev).
func Default() Spec {
	var pkgs []string
	for _, p := range RHELPackages {
		pkgs = append(pkgs, p.Deb)
	}
	pkgs = append(pkgs, standInOnly...)
	return Spec{
		Suite: "bookworm",
		Mirrors: []string{
			"deb http://deb.debian.org/debian bookworm main",
			"deb http://deb.debian.org/debian bookworm-updates main",
			"deb http://deb.debian.org/debian-security bookworm-security main",
		},
		Packages: pkgs,
		Options: []string{
			"--variant=essential", "--mode=root", "--format=tar", "--skip=output/dev",
			"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*",
			"--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-exclude=/usr/share/info/*",
		},
		Hook: TrustStoreHook,
	}
}

// Key identifies a build: a hash of everything that goes into the mmdebstrap command line.
func (s Spec) Key() string {
	h := sha256.New()
	for _, part := range s.argv("") {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// argv is the mmdebstrap command line writing to target.
func (s Spec) argv(target string) []string {
	argv := []string{"mmdebstrap"}
	argv = append(argv, s.Options...)
	argv = append(argv, "--include="+strings.Join(s.Packages, ","))
	if s.Hook != "" {
		argv = append(argv, "--customize-hook="+s.Hook)
	}
	argv = append(argv, s.Suite, target)
	return append(argv, s.Mirrors...)
}

// FileName is the tarball's name in the cache.
func (s Spec) FileName() string { return "debian-" + s.Suite + "-root-" + s.Key() + ".tar" }

// Build returns the path of the root tarball of spec in toolsDir/debian-root, running mmdebstrap first when it is
// not there. mmdebstrap writes into a temporary file that is renamed into place only when it succeeded, and a
// lock file makes concurrent callers wait for one build. Progress goes to log (mmdebstrap's own lines included).
func Build(ctx context.Context, spec Spec, toolsDir string, log io.Writer) (string, error) {
	dir := filepath.Join(toolsDir, "debian-root")
	out := filepath.Join(dir, spec.FileName())
	if _, err := os.Stat(out); err == nil {
		fmt.Fprintf(log, "standinroot: %s is cached\n", out)
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := toolcache.Lock(ctx, filepath.Join(dir, "."+spec.FileName()+".lock"), "standinroot", log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil { // built by whoever held the lock before us
		return out, nil
	}
	mmdebstrap, err := exec.LookPath("mmdebstrap")
	if err != nil {
		return "", fmt.Errorf("making the Debian root that stands in for RHEL 9 needs mmdebstrap: apt-get install -y mmdebstrap: %w", err)
	}
	if os.Geteuid() != 0 {
		return "", errors.New("mmdebstrap --mode=root needs root: run as root (go tool mage test does for the cluster suite)")
	}
	tmp := filepath.Join(dir, ".build-"+spec.FileName())
	_ = os.Remove(tmp)
	defer os.Remove(tmp)
	argv := spec.argv(tmp)
	fmt.Fprintf(log, "standinroot: building %s with mmdebstrap (%s, %d packages); about two minutes with a warm network\n", out, spec.Suite, len(spec.Packages))
	start := time.Now()
	cmd := exec.CommandContext(ctx, mmdebstrap, argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("mmdebstrap %s: %w", spec.Suite, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "standinroot: built %s in %s\n", out, time.Since(start).Round(time.Second))
	return out, nil
}
