package health

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

type record struct {
	mu  sync.Mutex
	got map[string][]bool
}

func (r *record) SetDependencyHealthy(d string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[d] = append(r.got[d], ok)
}

func (r *record) results(d string) []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bool(nil), r.got[d]...)
}

// TestMonitorReportsEveryResult: a check that fails, then recovers, is reported each period.
func TestMonitorReportsEveryResult(t *testing.T) {
	var mu sync.Mutex
	fail := true
	rec := &record{got: map[string][]bool{}}
	m := &Monitor{Period: 5 * time.Millisecond, Observer: rec, Checks: []Check{
		{Name: "watchdog", Fn: func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return errors.New("down")
			}
			return nil
		}},
	}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	for len(rec.results("watchdog")) < 2 {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	for r := rec.results("watchdog"); !r[len(r)-1]; r = rec.results("watchdog") {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if r := rec.results("watchdog"); r[0] {
		t.Fatalf("results %v: the first check failed, want false first", r)
	}
}
