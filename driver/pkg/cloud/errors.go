package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	efstypes "github.com/aws/aws-sdk-go-v2/service/efs/types"
	"github.com/aws/smithy-go"
)

// classify wraps an SDK error with the sentinel it stands for, plus the operation and resource.
func classify(op, resource string, err error) error {
	if err == nil {
		return nil
	}
	var exists *efstypes.AccessPointAlreadyExists
	if errors.As(err, &exists) {
		id := ""
		if exists.AccessPointId != nil {
			id = *exists.AccessPointId
		}
		return fmt.Errorf("%s %s: %w", op, resource, &AlreadyExistsError{AccessPointID: id, Err: err})
	}
	return fmt.Errorf("%s %s: %w: %w", op, resource, sentinelFor(err), err)
}

func sentinelFor(err error) error {
	var (
		apNotFound *efstypes.AccessPointNotFound
		fsNotFound *efstypes.FileSystemNotFound
		limit      *efstypes.AccessPointLimitExceeded
		apiErr     smithy.APIError
		respErr    *awshttp.ResponseError
	)
	switch {
	case errors.As(err, &apNotFound):
		return ErrAccessPointNotFound
	case errors.As(err, &fsNotFound):
		return ErrFileSystemNotFound
	case errors.As(err, &limit):
		return ErrLimitExceeded
	case isThrottle(err):
		return ErrThrottled
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ErrUnavailable
	}
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "AccessDeniedException", "AccessDenied", "UnauthorizedOperation", "UnrecognizedClientException",
			"InvalidClientTokenId":
			return ErrAccessDenied
		case "ExpiredToken", "ExpiredTokenException", "RequestExpired",
			// the file system is being created or changed: a later retry succeeds
			"IncorrectFileSystemLifeCycleState", "IncorrectMountTargetState":
			return ErrUnavailable
		case "BadRequest", "ValidationException", "InvalidParameterValue":
			return ErrBadRequest
		}
	}
	if errors.As(err, &respErr) && respErr.HTTPStatusCode() >= http.StatusInternalServerError {
		return ErrUnavailable
	}
	if errors.As(err, &respErr) && respErr.HTTPStatusCode() == http.StatusForbidden {
		return ErrAccessDenied
	}
	if errors.As(err, &respErr) && respErr.HTTPStatusCode() >= http.StatusBadRequest {
		return ErrBadRequest
	}
	// No HTTP response at all: a transport failure that survived the retries.
	return ErrUnavailable
}
