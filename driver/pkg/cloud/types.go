package cloud

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error returned by this package wraps at most one of them (plus the SDK error).
var (
	// ErrAccessPointNotFound means the access point does not exist (EFS AccessPointNotFound).
	ErrAccessPointNotFound = errors.New("access point not found")
	// ErrFileSystemNotFound means the file system does not exist in this account and region (EFS FileSystemNotFound).
	ErrFileSystemNotFound = errors.New("file system not found")
	// ErrAlreadyExists means an access point with the same client token but other parameters exists; see
	// AlreadyExistsError for its ID.
	ErrAlreadyExists = errors.New("access point already exists")
	// ErrLimitExceeded means the file system's access point quota is reached (EFS AccessPointLimitExceeded).
	ErrLimitExceeded = errors.New("access point limit exceeded")
	// ErrThrottled means AWS kept throttling after every retry; retrying later will likely succeed.
	ErrThrottled = errors.New("throttled by AWS")
	// ErrUnavailable means AWS answered 5xx or could not be reached after every retry.
	ErrUnavailable = errors.New("AWS unavailable")
	// ErrAccessDenied means the credentials are not allowed to make the call.
	ErrAccessDenied = errors.New("access denied")
	// ErrBadRequest means AWS rejected the request's parameters.
	ErrBadRequest = errors.New("bad request")
)

// AlreadyExistsError carries the ID of the access point that already holds a client token.
type AlreadyExistsError struct {
	AccessPointID string
	Err           error
}

// Error names the access point and the SDK error.
func (e *AlreadyExistsError) Error() string {
	return fmt.Sprintf("access point %s already exists with this client token: %v", e.AccessPointID, e.Err)
}

// Unwrap returns ErrAlreadyExists and the SDK error.
func (e *AlreadyExistsError) Unwrap() []error { return []error{ErrAlreadyExists, e.Err} }

// AccessPoint is an EFS access point as the driver sees it.
type AccessPoint struct {
	ID           string
	FileSystemID string
	ClientToken  string
	// RootDir is the access point's root directory on the file system ("/" when none was set).
	RootDir string
	// HasPosixUser tells whether UID and GID are set.
	HasPosixUser bool
	UID, GID     uint32
	// HasCreationInfo tells whether OwnerUID, OwnerGID and Permissions (of the root directory, when EFS creates
	// it) are set.
	HasCreationInfo    bool
	OwnerUID, OwnerGID uint32
	Permissions        string
	Tags               map[string]string
	State              string
}

// CreateAccessPointInput describes the access point to create. The POSIX user and the root directory's owner are
// both UID:GID.
type CreateAccessPointInput struct {
	FileSystemID string
	ClientToken  string
	RootDir      string
	Permissions  string
	UID, GID     uint32
	Tags         map[string]string
}

// FileSystem is the part of an EFS file system description the driver uses.
type FileSystem struct {
	ID string
	// AvailabilityZoneName and AvailabilityZoneID are set for One Zone file systems only.
	AvailabilityZoneName string
	AvailabilityZoneID   string
}

// MountTarget is an EFS mount target.
type MountTarget struct {
	ID                   string
	FileSystemID         string
	AvailabilityZoneName string
	AvailabilityZoneID   string
	IPAddress            string
	State                string
}

// Zone is an availability zone of the calling account: its name (account-specific) and ID (physical).
type Zone struct {
	Name, ID string
}
