package provision

import (
	"crypto/sha256"
	"fmt"
	"path"
	"strings"
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

// RootDir works out the access point root directory for volume name: basePath, the expanded subPathPattern and,
// with ensureUniqueDirectory, a suffix derived from the volume name (stable across retries of one CreateVolume,
// unique per volume). The result is absolute, clean, never "/", never contains "..", and fits EFS's limits.
func RootDir(p Params, volumeName string) (string, error) {
	sub, err := expand(p, volumeName)
	if err != nil {
		return "", err
	}
	if p.EnsureUniqueDirectory {
		sub = strings.TrimSuffix(sub, "/") + "-" + uniqueSuffix(volumeName)
		if strings.HasPrefix(sub, "-") {
			sub = sub[1:]
		}
	}
	for _, elem := range strings.Split(sub, "/") {
		if elem == ".." || elem == "." {
			return "", invalid(ParamSubPathPattern, p.SubPathPattern, fmt.Sprintf(`expanded to %q; want no "." or ".." elements`, sub))
		}
	}
	dir := path.Join("/", p.BasePath, sub)
	switch {
	case dir == "/":
		return "", fmt.Errorf("%w: %s %q with %s %q gives the file system root \"/\": set %s=true or a non-empty pattern",
			ErrInvalidParameter, ParamSubPathPattern, p.SubPathPattern, ParamBasePath, p.BasePath, ParamEnsureUniqueDirectory)
	case len(dir) > maxRootDirLen:
		return "", fmt.Errorf("%w: access point root %q from %s %q and %s %q is %d characters: want at most %d",
			ErrInvalidParameter, dir, ParamBasePath, p.BasePath, ParamSubPathPattern, p.SubPathPattern, len(dir), maxRootDirLen)
	case strings.Count(dir, "/") > maxRootDirSlashes:
		return "", fmt.Errorf("%w: access point root %q from %s %q and %s %q has %d levels: want at most %d",
			ErrInvalidParameter, dir, ParamBasePath, p.BasePath, ParamSubPathPattern, p.SubPathPattern, strings.Count(dir, "/"), maxRootDirSlashes)
	}
	return dir, nil
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
