package main

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// retryUntilDone runs step until it succeeds or ctx ends, waiting 1 s after the first failure and doubling the wait
// up to 1 min; each failure is logged with what was being done. It is the start-up loop of both services.
func retryUntilDone(ctx context.Context, what string, step func() error) {
	for delay := time.Second; ; delay = min(2*delay, time.Minute) {
		err := step()
		if err == nil {
			return
		}
		klog.ErrorS(err, what+"; retrying", "retryIn", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
