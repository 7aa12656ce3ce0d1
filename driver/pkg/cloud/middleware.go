package cloud

import (
	"context"
	"errors"
	"strings"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// Observer receives one report per attempt of an AWS API call (retries are separate attempts), as upstream's
// RecordRequestsMiddleware does: dashboards built on upstream's metrics keep their meaning.
type Observer interface {
	// ObserveAPICall reports a finished attempt; service is "efs", "ec2" or "sts"; code is "" on success or a
	// throttled attempt, else the AWS error code.
	ObserveAPICall(service, operation string, d time.Duration, code string)
	// ObserveThrottle reports one throttled attempt.
	ObserveThrottle(service, operation string)
}

// addMetricsMiddleware returns the SDK APIOptions entry that reports to obs. It sits at the end of the Finalize
// step, after the retry middleware, so it sees every attempt.
func addMetricsMiddleware(obs Observer, now func() time.Time) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		attempt := middleware.FinalizeMiddlewareFunc("EFSCSIAttemptMetrics", func(ctx context.Context, in middleware.FinalizeInput,
			next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			start := now()
			out, md, err := next.HandleFinalize(ctx, in)
			service, op := strings.ToLower(awsmiddleware.GetServiceID(ctx)), awsmiddleware.GetOperationName(ctx)
			if op == "" {
				op = "Unknown"
			}
			code := ""
			switch {
			case err != nil && isThrottle(err):
				obs.ObserveThrottle(service, op)
			case err != nil:
				code = errorCode(err)
			}
			obs.ObserveAPICall(service, op, now().Sub(start), code)
			return out, md, err
		})
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
