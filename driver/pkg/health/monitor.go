package health

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// Check is one dependency: Name labels it in metrics and logs; Fn returns why it is unhealthy, or nil.
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// Observer records each check's latest result.
type Observer interface {
	SetDependencyHealthy(dependency string, healthy bool)
}

// Monitor runs its checks every Period (default 30s), or every RetryPeriod (default 2s) while one fails, until
// ctx ends. A check that turns unhealthy is logged as an error with the reason; one that recovers is logged once;
// the Observer gets every result.
type Monitor struct {
	Checks      []Check
	Period      time.Duration
	RetryPeriod time.Duration
	Observer    Observer
	// Timeout bounds one check (default 10s).
	Timeout time.Duration
}

// Run checks at once, then every Period, until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	period, retry, timeout := m.Period, m.RetryPeriod, m.Timeout
	if period <= 0 {
		period = 30 * time.Second
	}
	if retry <= 0 {
		retry = 2 * time.Second
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	healthy := map[string]bool{}
	for {
		failing := false
		for _, c := range m.Checks {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			err := c.Fn(cctx)
			cancel()
			if ctx.Err() != nil {
				return
			}
			was, seen := healthy[c.Name]
			switch {
			case err != nil && (was || !seen):
				klog.ErrorS(err, "Dependency unhealthy; the driver keeps serving and retries", "dependency", c.Name)
			case err == nil && seen && !was:
				klog.InfoS("Dependency healthy again", "dependency", c.Name)
			}
			healthy[c.Name] = err == nil
			failing = failing || err != nil
			if m.Observer != nil {
				m.Observer.SetDependencyHealthy(c.Name, err == nil)
			}
		}
		next := period
		if failing {
			next = min(period, retry)
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
