// Package stamp works out the provenance a module's binaries are stamped with: version, commit and tree state.
package stamp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
)

// Stamp is what a binary of one module says about itself.
type Stamp struct {
	// Version is vMAJOR.MINOR.PATCH[-PRERELEASE][+BUILD].
	Version string
	// Commit is the full hash of HEAD.
	Commit string
	// Dirty is true when the work tree has uncommitted or untracked changes.
	Dirty bool
}

// TreeState is "dirty" or "clean", the form the binaries print.
func (s Stamp) TreeState() string {
	if s.Dirty {
		return "dirty"
	}
	return "clean"
}

// fullSemver accepts only complete semantic versions with a leading v; semver.IsValid alone would also take
// shorthands such as v1.2, which are not valid release versions.
var fullSemver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// Resolve returns the stamp of module (a directory name under repoRoot, also its tag prefix). The version is the
// highest tag module/vX.Y.Z that points at HEAD, or else the content of module/VERSION.
func Resolve(ctx context.Context, repoRoot, module string) (Stamp, error) {
	git, err := toolchain.Find("git", "stamp binaries with their commit and version tag")
	if err != nil {
		return Stamp{}, err
	}
	commit, err := toolchain.Output(ctx, repoRoot, nil, git, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return Stamp{}, fmt.Errorf("reading the commit to stamp (is %s a git clone with at least one commit?): %w", repoRoot, err)
	}
	status, err := toolchain.Output(ctx, repoRoot, nil, git, "status", "--porcelain")
	if err != nil {
		return Stamp{}, fmt.Errorf("checking for uncommitted changes: %w", err)
	}
	tags, err := toolchain.Output(ctx, repoRoot, nil, git, "tag", "--points-at", "HEAD", "--list", module+"/v*")
	if err != nil {
		return Stamp{}, fmt.Errorf("listing %s/v* tags at HEAD: %w", module, err)
	}
	version, err := versionFromTags(module, strings.Fields(tags))
	if err != nil {
		return Stamp{}, err
	}
	if version == "" {
		version, err = versionFromFile(filepath.Join(repoRoot, module, "VERSION"), module+"/VERSION")
		if err != nil {
			return Stamp{}, err
		}
	}
	return Stamp{Version: version, Commit: commit, Dirty: status != ""}, nil
}

// versionFromTags picks the highest of the module's tags, failing on any tag that is not a full semver, since a
// release tag that the build silently ignored would ship a binary claiming the wrong version.
func versionFromTags(module string, tags []string) (string, error) {
	best := ""
	for _, tag := range tags {
		v := strings.TrimPrefix(tag, module+"/")
		if !fullSemver.MatchString(v) {
			return "", fmt.Errorf("tag %q: want %s/vMAJOR.MINOR.PATCH[-PRERELEASE], e.g. %s/v1.2.3", tag, module, module)
		}
		if best == "" || semver.Compare(v, best) > 0 {
			best = v
		}
	}
	return best, nil
}

// versionFromFile reads a VERSION file holding MAJOR.MINOR.PATCH[-PRERELEASE], with or without a leading v.
func versionFromFile(path, name string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w (without a %s/vX.Y.Z tag at HEAD the version comes from this file)", name, err, filepath.Base(filepath.Dir(path)))
	}
	return ParseVersionFile(name, string(data))
}

// ParseVersionFile validates the content of a VERSION file and returns it in vMAJOR.MINOR.PATCH form.
func ParseVersionFile(name, content string) (string, error) {
	raw := strings.TrimSpace(content)
	v := raw
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !fullSemver.MatchString(v) {
		return "", fmt.Errorf("%s %q: want one line MAJOR.MINOR.PATCH[-PRERELEASE], e.g. 1.2.3", name, raw)
	}
	return v, nil
}
