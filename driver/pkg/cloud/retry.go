package cloud

import (
	"maps"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// throttleCodes are the SDK's default throttle codes plus EFS's TooManyRequests.
var throttleCodes = func() map[string]struct{} {
	m := maps.Clone(retry.DefaultThrottleErrorCodes)
	m["TooManyRequests"] = struct{}{}
	return m
}()

// isThrottle reports whether err is an AWS throttling error.
func isThrottle(err error) bool {
	return retry.ThrottleErrorCode{Codes: throttleCodes}.IsErrorThrottle(err).Bool()
}

// RetryOptions tune the SDK retryers.
type RetryOptions struct {
	// Adaptive selects the SDK's adaptive retry mode (client-side rate limiting on throttles); otherwise standard.
	Adaptive bool
	// MaxAttempts per call, including the first; 0 means 5.
	MaxAttempts int
	// MaxBackoff caps the delay between attempts; 0 means the SDK default (20s).
	MaxBackoff time.Duration
}

// retryers hands out one retryer per API operation, so throttling on one call does not drain the retry budget
// or the adaptive rate of another (upstream behaviour, kept across requests).
type retryers struct {
	opts RetryOptions
	mu   sync.Mutex
	byOp map[string]aws.Retryer
}

func newRetryers(opts RetryOptions) *retryers {
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 5
	}
	return &retryers{opts: opts, byOp: map[string]aws.Retryer{}}
}

func (r *retryers) get(op string) aws.Retryer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rt, ok := r.byOp[op]; ok {
		return rt
	}
	standard := func(o *retry.StandardOptions) {
		o.MaxAttempts = r.opts.MaxAttempts
		if r.opts.MaxBackoff > 0 {
			o.MaxBackoff = r.opts.MaxBackoff
			o.Backoff = retry.NewExponentialJitterBackoff(r.opts.MaxBackoff)
		}
		o.Throttles = append(o.Throttles, retry.ThrottleErrorCode{Codes: throttleCodes})
		o.Retryables = append(o.Retryables, retry.RetryableErrorCode{Codes: throttleCodes})
	}
	var rt aws.Retryer
	if r.opts.Adaptive {
		rt = retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
			o.StandardOptions = append(o.StandardOptions, standard)
			o.Throttles = append(o.Throttles, retry.ThrottleErrorCode{Codes: throttleCodes})
		})
	} else {
		rt = retry.NewStandard(standard)
	}
	r.byOp[op] = rt
	return rt
}
