package volume

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// ErrInvalidHandle is wrapped by every handle parse error.
var ErrInvalidHandle = errors.New("invalid volume handle")

// ErrUnsupportedType is wrapped, besides ErrInvalidHandle, when a handle is well-typed but of a volume type this
// driver does not serve (s3files:): callers that treat unknown IDs as nothing to do must not treat these so.
var ErrUnsupportedType = errors.New("unsupported volume type")

var (
	fileSystemIDPattern  = regexp.MustCompile(`^fs-[0-9a-f]{8,40}$`)
	accessPointIDPattern = regexp.MustCompile(`^fsap-[0-9a-f]{8,40}$`)
)

// TypeEFS is the prefix of typed EFS handles (upstream v3+ form).
const TypeEFS = "efs"

// Handle is a parsed EFS volume handle.
type Handle struct {
	// Typed is true when the handle was written in the typed form "efs:fs-…".
	Typed bool
	// FileSystemID is the EFS file system, fs-[0-9a-f]{8,40}.
	FileSystemID string
	// Path is the cleaned sub-directory to mount ("" for the root); relative to the access point root when
	// AccessPointID is set.
	Path string
	// AccessPointID is the access point to mount through, fsap-[0-9a-f]{8,40}, or "".
	AccessPointID string
}

// ValidFileSystemID reports whether id has the form fs-[0-9a-f]{8,40}.
func ValidFileSystemID(id string) bool { return fileSystemIDPattern.MatchString(id) }

// ValidAccessPointID reports whether id has the form fsap-[0-9a-f]{8,40}.
func ValidAccessPointID(id string) bool { return accessPointIDPattern.MatchString(id) }

// ParseHandle parses a volume handle in either accepted form:
//
//	fs-X | fs-X: | fs-X:/sub/path | fs-X::fsap-Y | fs-X:/sub/path:fsap-Y
//	efs:fs-X[:path[:fsap-Y]]
//
// The path is cleaned; a path that climbs above its root ("..") is refused.
func ParseHandle(s string) (Handle, error) {
	const form = "want fs-<hex>[:path[:fsap-<hex>]] or efs:fs-<hex>[:path[:fsap-<hex>]]"
	if s == "" {
		return Handle{}, fmt.Errorf("%w: volume ID is empty: %s", ErrInvalidHandle, form)
	}
	fields := strings.Split(s, ":")
	h := Handle{}
	switch {
	case fields[0] == TypeEFS:
		h.Typed = true
		fields = fields[1:]
	case fields[0] == "s3files":
		return Handle{}, fmt.Errorf("%w: %w: volume ID %q is of volume type s3files (Amazon S3 Files), which this driver does not support: %s",
			ErrInvalidHandle, ErrUnsupportedType, s, form)
	}
	if len(fields) == 0 {
		return Handle{}, fmt.Errorf("%w: volume ID %q has no file system ID: %s", ErrInvalidHandle, s, form)
	}
	if len(fields) > 3 {
		return Handle{}, fmt.Errorf("%w: volume ID %q has too many ':'-separated fields: %s", ErrInvalidHandle, s, form)
	}
	h.FileSystemID = fields[0]
	if !ValidFileSystemID(h.FileSystemID) {
		return Handle{}, fmt.Errorf("%w: volume ID %q: file system ID %q: %s", ErrInvalidHandle, s, h.FileSystemID, form)
	}
	if len(fields) > 1 && fields[1] != "" {
		p, err := cleanSubPath(fields[1])
		if err != nil {
			return Handle{}, fmt.Errorf("%w: volume ID %q: %w", ErrInvalidHandle, s, err)
		}
		h.Path = p
	}
	if len(fields) > 2 && fields[2] != "" {
		h.AccessPointID = fields[2]
		if !ValidAccessPointID(h.AccessPointID) {
			return Handle{}, fmt.Errorf("%w: volume ID %q: access point ID %q: %s", ErrInvalidHandle, s, h.AccessPointID, form)
		}
	}
	return h, nil
}

// cleanSubPath cleans a handle path and refuses one that climbs above its root.
func cleanSubPath(p string) (string, error) {
	c := path.Clean(p)
	if dotDot, _ := DotElements(c); dotDot {
		return "", fmt.Errorf("path %q climbs above the volume root with \"..\": want a path inside the file system", p)
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

// String formats the handle in the form it was parsed from: typed handles keep the "efs:" prefix, legacy ones
// drop empty trailing fields.
func (h Handle) String() string {
	var b strings.Builder
	if h.Typed {
		b.WriteString(TypeEFS + ":")
	}
	b.WriteString(h.FileSystemID)
	switch {
	case h.AccessPointID != "":
		b.WriteString(":" + h.Path + ":" + h.AccessPointID)
	case h.Path != "":
		b.WriteString(":" + h.Path)
	}
	return b.String()
}

// MountSource is what the node mounts: "<fs-id>:<path or />", the path relative to the access point root when the
// handle carries an access point.
func (h Handle) MountSource() string {
	p := h.Path
	if p == "" {
		p = "/"
	}
	return h.FileSystemID + ":" + p
}
