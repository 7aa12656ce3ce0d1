package scparams

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// Template variables of subPathPattern.
const (
	varPVName       = "${.PV.name}"
	varPVCName      = "${.PVC.name}"
	varPVCNamespace = "${.PVC.namespace}"
)

// Limits of an access point root directory path enforced before EFS sees it (upstream's rules).
const (
	maxRootDirLen     = 100
	maxRootDirSlashes = 5
)

func parseSubPathPattern(v string) (string, error) {
	rest := strings.NewReplacer(varPVName, "", varPVCName, "", varPVCNamespace, "").Replace(v)
	if strings.Contains(rest, "${") || strings.Contains(rest, "}") {
		return "", invalid(ParamSubPathPattern, v, "want fixed text and the variables ${.PV.name}, ${.PVC.name}, ${.PVC.namespace}")
	}
	if hasDotDot(v) {
		return "", invalid(ParamSubPathPattern, v, `want a path without ".." elements`)
	}
	return v, nil
}

// RootDir works out the access point root directory for volume name. Without subPathPattern it is upstream's
// /<basePath>/<volume name>. With subPathPattern it is basePath plus the expanded pattern and, with
// ensureUniqueDirectory, a suffix derived from the volume name (stable across retries of one CreateVolume, unique
// per volume). A path over EFS's 100-character limit has its last element shortened (see shorten). The result is
// absolute, clean, never "/", never contains "..", and fits EFS's limits.
func RootDir(p Params, volumeName string) (string, error) {
	sub := volumeName
	if p.SubPathPatternSet {
		var err error
		if sub, err = expand(p, volumeName); err != nil {
			return "", err
		}
		if p.EnsureUniqueDirectory {
			sub = strings.TrimPrefix(strings.TrimSuffix(sub, "/")+"-"+uniqueSuffix(volumeName), "-")
		}
	}
	if dotDot, dot := volume.DotElements(sub); dotDot || dot {
		return "", invalid(ParamSubPathPattern, p.SubPathPattern, fmt.Sprintf(`expanded to %q; want no "." or ".." elements`, sub))
	}
	dir := path.Join("/", p.BasePath, sub)
	switch {
	case dir == "/":
		return "", fmt.Errorf("%w: %s %q with %s %q gives the file system root \"/\": set %s=true or a non-empty pattern",
			ErrInvalidParameter, ParamSubPathPattern, p.SubPathPattern, ParamBasePath, p.BasePath, ParamEnsureUniqueDirectory)
	case strings.Count(dir, "/") > maxRootDirSlashes:
		return "", fmt.Errorf("%w: access point root %q from %s %q and %s %q has %d levels: want at most %d",
			ErrInvalidParameter, dir, ParamBasePath, p.BasePath, ParamSubPathPattern, p.SubPathPattern, strings.Count(dir, "/"), maxRootDirSlashes)
	case len(dir) > maxRootDirLen:
		short, ok := shorten(dir)
		if !ok {
			return "", fmt.Errorf("%w: access point root %q from %s %q and %s %q is %d characters and cannot be shortened to %d: shorten %s",
				ErrInvalidParameter, dir, ParamBasePath, p.BasePath, ParamSubPathPattern, p.SubPathPattern, len(dir), maxRootDirLen, ParamBasePath)
		}
		dir = short
	}
	return dir, nil
}

// shortHashLen is how many hex digits of sha256 end a shortened directory name (64 bits).
const shortHashLen = 16

// shorten fits a root directory over maxRootDirLen characters into the limit: its last element keeps as many of
// its leading characters as fit, then "-" and the first 16 hex digits of sha256 of the whole original path. The
// same path always gives the same result (retries reach the same directory); two different paths collide only if
// they share the kept prefix and 64 bits of their hashes. It fails when the parent alone leaves no room.
func shorten(dir string) (string, bool) {
	parent, elem := path.Split(dir)
	keep := maxRootDirLen - len(parent) - 1 - shortHashLen
	if keep < 1 {
		return "", false
	}
	sum := sha256.Sum256([]byte(dir))
	return parent + elem[:min(keep, len(elem))] + "-" + hex.EncodeToString(sum[:])[:shortHashLen], true
}

// expand substitutes the template variables. The PV name is the CSI volume name when the provisioner did not pass
// it (external-provisioner names the PV after the volume).
func expand(p Params, volumeName string) (string, error) {
	pvName := p.PVName
	if pvName == "" {
		pvName = volumeName
	}
	vars := []struct{ name, value, param string }{
		{varPVName, pvName, ParamPVName},
		{varPVCName, p.PVCName, ParamPVCName},
		{varPVCNamespace, p.PVCNamespace, ParamPVCNamespace},
	}
	out := p.SubPathPattern
	for _, v := range vars {
		if !strings.Contains(out, v.name) {
			continue
		}
		if v.value == "" {
			return "", fmt.Errorf("%w: %s %q uses %s but %s is not set: run csi-provisioner with --extra-create-metadata",
				ErrInvalidParameter, ParamSubPathPattern, p.SubPathPattern, v.name, v.param)
		}
		out = strings.ReplaceAll(out, v.name, v.value)
	}
	return out, nil
}

// uniqueSuffix is a UUID-shaped value derived from the volume name: the same name (a retried CreateVolume) gives
// the same directory, different names give different ones.
func uniqueSuffix(volumeName string) string {
	s := sha256.Sum256([]byte("efs-csi-unique-dir\x00" + volumeName))
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

// LegacyRootDir is the directory the previous version of this driver chose for a StorageClass without
// subPathPattern: ${.PV.name} plus the derived suffix.
func LegacyRootDir(p Params, volumeName string) (string, error) {
	if p.SubPathPatternSet {
		return RootDir(p, volumeName)
	}
	p.SubPathPattern, p.SubPathPatternSet, p.EnsureUniqueDirectory = varPVName, true, true
	return RootDir(p, volumeName)
}

// uuidPattern is a canonical lower-case UUID, the form of upstream's random directory suffix (google/uuid's
// String()).
var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// UpstreamUniqueDirPrefix is what the upstream driver's root directory of volume name starts with when
// subPathPattern and ensureUniqueDirectory ask it for a unique directory: basePath, the pattern with upstream's
// values (the provisioner's PV name, PVC name and namespace, "" when absent) and "-", followed by a random UUID
// (kubernetes-sigs/aws-efs-csi-driver v3.4.1 pkg/driver/controller.go CreateVolume). ok is false when upstream
// would have made no random part, so its directory is the one RootDir gives.
func UpstreamUniqueDirPrefix(p Params) (prefix string, ok bool) {
	if !p.SubPathPatternSet || !p.EnsureUniqueDirectory {
		return "", false
	}
	dir := strings.NewReplacer(varPVName, p.PVName, varPVCName, p.PVCName, varPVCNamespace, p.PVCNamespace).Replace(p.SubPathPattern)
	// The element ending in "-" is never "." or "..", so cleaning the joined path leaves the UUID part alone.
	return path.Join("/", p.BasePath, dir+"-"), true
}

// IsUpstreamUniqueDir reports whether root is prefix followed by a UUID: a directory the upstream driver made for
// the request whose UpstreamUniqueDirPrefix is prefix.
func IsUpstreamUniqueDir(root, prefix string) bool {
	rest, ok := strings.CutPrefix(root, prefix)
	return ok && uuidPattern.MatchString(rest)
}
