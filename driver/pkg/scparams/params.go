package scparams

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrInvalidParameter is wrapped by every StorageClass parameter error.
var ErrInvalidParameter = errors.New("invalid StorageClass parameter")

// StorageClass parameter keys (upstream names, plus reuseAccessPointTokenFormat).
const (
	ParamProvisioningMode             = "provisioningMode"
	ParamFileSystemID                 = "fileSystemId"
	ParamFileSystemIDConfigRef        = "fileSystemIdConfigRef"
	ParamFileSystemIDSecretRef        = "fileSystemIdSecretRef"
	ParamDirectoryPerms               = "directoryPerms"
	ParamUID                          = "uid"
	ParamGID                          = "gid"
	ParamGIDRangeStart                = "gidRangeStart"
	ParamGIDRangeEnd                  = "gidRangeEnd"
	ParamBasePath                     = "basePath"
	ParamSubPathPattern               = "subPathPattern"
	ParamEnsureUniqueDirectory        = "ensureUniqueDirectory"
	ParamReuseAccessPoint             = "reuseAccessPoint"
	ParamReuseTokenFormat             = "reuseAccessPointTokenFormat"
	ParamAZ                           = "az"
	ParamEnforceZoneAffinity          = "enforceZoneAffinity"
	ParamEnableTagging                = "enableTagging"
	ParamPVName                       = "csi.storage.k8s.io/pv/name"
	ParamPVCName                      = "csi.storage.k8s.io/pvc/name"
	ParamPVCNamespace                 = "csi.storage.k8s.io/pvc/namespace"
	ModeEFSAccessPoint                = "efs-ap"
	DefaultGIDRangeStart       uint32 = 50000
	DefaultGIDRangeEnd         uint32 = 60000
)

// Token formats of reuseAccessPoint volumes.
const (
	// TokenNamespaced derives the reuse token from the file system, PVC namespace and PVC name (default).
	TokenNamespaced = "namespaced"
	// TokenUpstream is the upstream driver's token, sha256(PVC name): it collides across namespaces and file
	// systems and exists only to keep reusing access points the upstream driver made.
	TokenUpstream = "upstream"
)

// ObjectRef points at one key of a ConfigMap or Secret: namespace/name/key.
type ObjectRef struct {
	Namespace, Name, Key string
}

// Params are the parsed StorageClass parameters of one CreateVolume call.
type Params struct {
	FileSystemID          string
	FileSystemIDConfigRef *ObjectRef
	FileSystemIDSecretRef *ObjectRef
	// DirectoryPerms is "" when the StorageClass has none (enough for a reused access point; see PermsMissing).
	DirectoryPerms string
	UID, GID       *uint32
	GIDRangeStart  uint32
	GIDRangeEnd    uint32
	BasePath       string
	// SubPathPattern is the subPathPattern parameter; SubPathPatternSet says whether it was given at all (upstream
	// names the directory after the volume, with no suffix, when it was not).
	SubPathPattern        string
	SubPathPatternSet     bool
	EnsureUniqueDirectory bool
	ReuseAccessPoint      bool
	ReuseTokenFormat      string
	AZ                    string
	EnforceZoneAffinity   bool
	EnableTagging         bool
	PVName                string
	PVCName               string
	PVCNamespace          string
	// Unknown lists the keys that are not parameters of this driver, sorted; they are accepted (as upstream
	// does) and reported as a warning.
	Unknown []string
	// Lenient lists the parameters whose value did not parse but was accepted with upstream's fallback (for
	// example ensureUniqueDirectory: "yes" counts as true).
	Lenient []string
}

var (
	refPattern    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[-._a-zA-Z0-9]+$`)
	zonePattern   = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+$`)
	zoneIDPattern = regexp.MustCompile(`^[a-z]{2,5}[0-9]+(-[a-z]+[0-9]+)*-az[0-9]+$`)
	permsPattern  = regexp.MustCompile(`^[0-7]{3,4}$`)
)

// ParseParams parses and validates StorageClass parameters; every error names the parameter, the value and the
// accepted form, and wraps ErrInvalidParameter.
func ParseParams(in map[string]string) (Params, error) {
	p := Params{
		GIDRangeStart:         DefaultGIDRangeStart,
		GIDRangeEnd:           DefaultGIDRangeEnd,
		EnsureUniqueDirectory: true,
		EnableTagging:         true,
		ReuseTokenFormat:      TokenNamespaced,
	}
	mode, ok := in[ParamProvisioningMode]
	if !ok {
		return Params{}, invalid(ParamProvisioningMode, "", "required; want "+ModeEFSAccessPoint)
	}
	if mode != ModeEFSAccessPoint {
		return Params{}, invalid(ParamProvisioningMode, mode, "want "+ModeEFSAccessPoint+" (s3files-ap is not supported)")
	}
	var rangeStart, rangeEnd *uint32
	for _, k := range sortedKeys(in) {
		if err := p.set(k, in[k], &rangeStart, &rangeEnd); err != nil {
			return Params{}, err
		}
	}
	if err := p.checkFileSystemSource(); err != nil {
		return Params{}, err
	}
	if err := p.checkGIDRange(rangeStart, rangeEnd); err != nil {
		return Params{}, err
	}
	if p.ReuseAccessPoint && (p.PVCName == "" || p.PVCNamespace == "" && p.ReuseTokenFormat == TokenNamespaced) {
		return Params{}, fmt.Errorf("%w: %s=true needs %s and %s: run csi-provisioner with --extra-create-metadata",
			ErrInvalidParameter, ParamReuseAccessPoint, ParamPVCName, ParamPVCNamespace)
	}
	return p, nil
}

// PermsMissing is the error when an access point must be created and the StorageClass has no directoryPerms. A reuseAccessPoint class that finds its access point never needs them (upstream only
// copies them into CreateAccessPoint), so ParseParams accepts their absence and the provisioner asks for them
// when it creates.
func PermsMissing() error {
	return invalid(ParamDirectoryPerms, "", "required to create an access point; want an octal mode such as 700 or 0775")
}

func (p *Params) set(k, v string, rangeStart, rangeEnd **uint32) error {
	var err error
	switch k {
	case ParamProvisioningMode:
	// Upstream trims the file system source parameters and counts a blank one as not given.
	case ParamFileSystemID:
		if v = strings.TrimSpace(v); v != "" {
			p.FileSystemID, err = parseFileSystemID(v)
		}
	case ParamFileSystemIDConfigRef:
		if v = strings.TrimSpace(v); v != "" {
			p.FileSystemIDConfigRef, err = parseRef(k, v)
		}
	case ParamFileSystemIDSecretRef:
		if v = strings.TrimSpace(v); v != "" {
			p.FileSystemIDSecretRef, err = parseRef(k, v)
		}
	case ParamDirectoryPerms:
		p.DirectoryPerms, err = parsePerms(v)
	case ParamUID:
		p.UID, err = parseID(k, v)
	case ParamGID:
		p.GID, err = parseID(k, v)
	case ParamGIDRangeStart:
		*rangeStart, err = parseID(k, v)
	case ParamGIDRangeEnd:
		*rangeEnd, err = parseID(k, v)
	case ParamBasePath:
		p.BasePath, err = parseBasePath(v)
	case ParamSubPathPattern:
		p.SubPathPattern, err = parseSubPathPattern(v)
		p.SubPathPatternSet = true
	case ParamEnsureUniqueDirectory:
		// Upstream: only a value that parses as false turns the suffix off; anything else counts as true.
		b, perr := strconv.ParseBool(v)
		p.EnsureUniqueDirectory = perr != nil || b
		if perr != nil {
			p.Lenient = append(p.Lenient, fmt.Sprintf("%s %q is not true or false: counted as true, as upstream does", k, v))
		}
	case ParamReuseAccessPoint:
		p.ReuseAccessPoint, err = parseBool(k, v)
	case ParamReuseTokenFormat:
		p.ReuseTokenFormat, err = parseTokenFormat(v)
	case ParamAZ:
		// Only a cross-account request reads az (upstream ignores it on any other class), and whether a request is
		// cross-account is in its secrets: CheckAZ validates it where it is used.
		p.AZ = strings.TrimSpace(v)
	case ParamEnforceZoneAffinity:
		p.EnforceZoneAffinity, err = parseBool(k, v)
	case ParamEnableTagging:
		p.EnableTagging, err = parseBool(k, v)
	case ParamPVName:
		p.PVName = v
	case ParamPVCName:
		p.PVCName = v
	case ParamPVCNamespace:
		p.PVCNamespace = v
	default:
		// Upstream ignores keys it does not know (fstype, keys copied from other drivers' examples): so do we,
		// and the caller warns about them.
		p.Unknown = append(p.Unknown, k)
	}
	return err
}

// KnownParams lists the StorageClass parameters this driver reads.
func KnownParams() []string {
	return []string{ParamProvisioningMode, ParamFileSystemID, ParamFileSystemIDConfigRef, ParamFileSystemIDSecretRef,
		ParamDirectoryPerms, ParamUID, ParamGID, ParamGIDRangeStart, ParamGIDRangeEnd, ParamBasePath, ParamSubPathPattern,
		ParamEnsureUniqueDirectory, ParamReuseAccessPoint, ParamReuseTokenFormat, ParamAZ, ParamEnforceZoneAffinity,
		ParamEnableTagging}
}

func (p *Params) checkFileSystemSource() error {
	n := 0
	for _, set := range []bool{p.FileSystemID != "", p.FileSystemIDConfigRef != nil, p.FileSystemIDSecretRef != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: want exactly one of %s, %s, %s; got %d", ErrInvalidParameter,
			ParamFileSystemID, ParamFileSystemIDConfigRef, ParamFileSystemIDSecretRef, n)
	}
	return nil
}

func (p *Params) checkGIDRange(start, end *uint32) error {
	switch {
	case start == nil && end == nil:
		return nil
	case start == nil || end == nil:
		return fmt.Errorf("%w: %s and %s must be set together; got only one", ErrInvalidParameter, ParamGIDRangeStart, ParamGIDRangeEnd)
	case *end <= *start:
		return fmt.Errorf("%w: %s %d must be greater than %s %d", ErrInvalidParameter, ParamGIDRangeEnd, *end, ParamGIDRangeStart, *start)
	}
	p.GIDRangeStart, p.GIDRangeEnd = *start, *end
	return nil
}

func invalid(param, value, form string) error {
	return fmt.Errorf("%w: %s %q: %s", ErrInvalidParameter, param, value, form)
}

func parseFileSystemID(v string) (string, error) {
	if !volume.ValidFileSystemID(v) {
		return "", invalid(ParamFileSystemID, v, "want fs-<8 to 40 hex digits>")
	}
	return v, nil
}

func parseRef(param, v string) (*ObjectRef, error) {
	if !refPattern.MatchString(v) {
		return nil, invalid(param, v, "want <namespace>/<name>/<key>")
	}
	parts := strings.SplitN(v, "/", 3)
	return &ObjectRef{Namespace: parts[0], Name: parts[1], Key: parts[2]}, nil
}

func parsePerms(v string) (string, error) {
	if !permsPattern.MatchString(v) {
		return "", invalid(ParamDirectoryPerms, v, "want an octal mode of 3 or 4 digits, such as 700, 0775 or 2775")
	}
	return v, nil
}

func parseID(param, v string) (*uint32, error) {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return nil, invalid(param, v, "want an integer in [0, 4294967295]")
	}
	u := uint32(n)
	return &u, nil
}

func parseBool(param, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, invalid(param, v, "want true or false")
	}
	return b, nil
}

func parseTokenFormat(v string) (string, error) {
	if v != TokenNamespaced && v != TokenUpstream {
		return "", invalid(ParamReuseTokenFormat, v, "want "+TokenNamespaced+" or "+TokenUpstream)
	}
	return v, nil
}

// CheckAZ validates the az parameter of a cross-account request, where it chooses the mount target.
func CheckAZ(v string) error {
	if !zonePattern.MatchString(v) && !zoneIDPattern.MatchString(v) {
		return invalid(ParamAZ, v, "want an availability zone name such as us-east-1a or a zone ID such as use1-az1")
	}
	return nil
}

// IsZoneID reports whether an az value is a zone ID (use1-az1) rather than a zone name (us-east-1a).
func IsZoneID(v string) bool { return zoneIDPattern.MatchString(v) }

func parseBasePath(v string) (string, error) {
	if hasDotDot(v) {
		return "", invalid(ParamBasePath, v, `want a directory path without ".." elements`)
	}
	c := path.Clean("/" + v)
	if c == "/" {
		return "", nil
	}
	return c, nil
}

func hasDotDot(p string) bool {
	dotDot, _ := volume.DotElements(p)
	return dotDot
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
