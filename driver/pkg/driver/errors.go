package driver

import (
	"context"
	"errors"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/fsref"
	"github.com/openshift/aws-efs-csi/driver/pkg/mount"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/rootdir"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrInFlight is returned when another call for the same volume is still running.
var ErrInFlight = errors.New("an operation for this volume is already in progress")

// errNotReady is wrapped when a request's deadline passes before the controller's AWS clients are initialised.
var errNotReady = errors.New("controller is not ready: AWS metadata and clients are still being initialised")

// errInitFailed is wrapped, with the cause, while the last attempt to initialise the AWS clients has failed.
var errInitFailed = errors.New("controller is not ready: initialising AWS access failed (retrying)")

// codeFor maps domain errors to gRPC codes: the only place that chooses a code, for every service.
func codeFor(err error) codes.Code {
	switch {
	case errors.Is(err, mount.ErrInvalidOption):
		return codes.InvalidArgument
	case errors.Is(err, mount.ErrAlreadyPublished):
		return codes.AlreadyExists
	case errors.Is(err, mount.ErrSingleWriter):
		return codes.FailedPrecondition
	case errors.Is(err, errPathNotFound):
		return codes.NotFound
	case errors.Is(err, errTooManyMounts):
		return codes.Aborted
	case errors.Is(err, errNodeUnknown):
		return codes.Unavailable
	case errors.Is(err, errStatsOff):
		return codes.Unimplemented
	case errors.Is(err, errInitFailed):
		return codes.Unavailable
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, scparams.ErrInvalidParameter), errors.Is(err, volume.ErrInvalidHandle),
		errors.Is(err, volume.ErrInvalidContext), errors.Is(err, cloud.ErrFileSystemNotFound), errors.Is(err, cloud.ErrBadRequest),
		errors.Is(err, errInvalidRequest), errors.Is(err, fsref.ErrRefNotFound):
		return codes.InvalidArgument
	case errors.Is(err, provision.ErrExhausted), errors.Is(err, cloud.ErrLimitExceeded):
		return codes.ResourceExhausted
	case errors.Is(err, provision.ErrConflict), errors.Is(err, cloud.ErrAlreadyExists):
		return codes.AlreadyExists
	case errors.Is(err, cloud.ErrAccessPointNotFound):
		return codes.NotFound
	case errors.Is(err, cloud.ErrThrottled), errors.Is(err, cloud.ErrUnavailable), errors.Is(err, errNotReady):
		return codes.Unavailable
	case errors.Is(err, cloud.ErrAccessDenied):
		return codes.PermissionDenied
	case errors.Is(err, provision.ErrWrongFileSystem), errors.Is(err, provision.ErrNoMountTarget), errors.Is(err, rootdir.ErrUnsafePath),
		errors.Is(err, provision.ErrSharedRootDir),
		errors.Is(err, errNoResolver):
		return codes.FailedPrecondition
	case errors.Is(err, ErrInFlight), errors.Is(err, provision.ErrBusy):
		return codes.Aborted
	}
	return codes.Internal
}

// toStatus turns a domain error into a gRPC status error, keeping its message.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codeFor(err), err.Error())
}

// redactedError keeps the code of the error it hides while its message has the secrets' values replaced.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactSecrets replaces every value of the request's secrets in err's message with the name of its key: AWS
// echoes the role ARN in AssumeRole errors, and no value from a Secret may reach an error, event or log. Values
// shorter than 4 characters (true, 1) are left alone: they say nothing and would mangle the message.
func redactSecrets(err error, secrets map[string]string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	msg := err.Error()
	keys := make([]string, 0, len(secrets))
	for k := range secrets {
		keys = append(keys, k)
	}
	// longest values first, so that a value containing another is replaced whole
	sort.Slice(keys, func(i, j int) bool { return len(secrets[keys[i]]) > len(secrets[keys[j]]) })
	changed := false
	for _, k := range keys {
		if v := secrets[k]; len(v) >= 4 && strings.Contains(msg, v) {
			msg, changed = strings.ReplaceAll(msg, v, "<secret "+k+">"), true
		}
	}
	if !changed {
		return err
	}
	return &redactedError{msg: msg, err: err}
}
