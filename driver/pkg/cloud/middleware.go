package cloud

import (
	"context"
	"errors"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// Observer receives one report per AWS API operation (after all retries) and one per throttled attempt.
type Observer interface {
	// ObserveAPICall reports a finished operation; code is "" on success, else the AWS error code.
	ObserveAPICall(service, operation string, d time.Duration, code string)
	// ObserveThrottle reports one throttled attempt.
	ObserveThrottle(service, operation string)
}

// addMetricsMiddleware returns the SDK APIOptions entry that reports to obs.
func addMetricsMiddleware(obs Observer, now func() time.Time) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		op := middleware.InitializeMiddlewareFunc("EFSCSIOperationMetrics", func(ctx context.Context, in middleware.InitializeInput,
			next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			start := now()
			out, md, err := next.HandleInitialize(ctx, in)
			obs.ObserveAPICall(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), now().Sub(start), errorCode(err))
			return out, md, err
		})
		attempt := middleware.FinalizeMiddlewareFunc("EFSCSIAttemptMetrics", func(ctx context.Context, in middleware.FinalizeInput,
			next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			if err != nil && isThrottle(err) {
				obs.ObserveThrottle(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx))
			}
			return out, md, err
		})
		if err := stack.Initialize.Add(op, middleware.After); err != nil {
			return err
		}
		return stack.Finalize.Add(attempt, middleware.After)
	}
}

func errorCode(err error) string {
	if err == nil {
		return ""
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "Canceled"
	}
	return "Transport"
}
