package driver

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/rootdir"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrInFlight is returned when another call for the same volume is still running.
var ErrInFlight = errors.New("an operation for this volume is already in progress")

// errNotReady is returned while the controller's AWS clients are not initialised.
var errNotReady = errors.New("controller is not ready: AWS metadata and clients are still being initialised")

// codeFor maps domain errors to gRPC codes: the only place that chooses a code.
func codeFor(err error) codes.Code {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, provision.ErrInvalidParameter), errors.Is(err, volume.ErrInvalidHandle),
		errors.Is(err, volume.ErrInvalidContext), errors.Is(err, cloud.ErrFileSystemNotFound), errors.Is(err, cloud.ErrBadRequest),
		errors.Is(err, errInvalidRequest), errors.Is(err, provision.ErrRefNotFound):
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
		errors.Is(err, errNoResolver):
		return codes.FailedPrecondition
	case errors.Is(err, ErrInFlight):
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
