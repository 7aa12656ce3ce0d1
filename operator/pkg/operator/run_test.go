package operator

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
)

// slowController keeps working for a while after its context ends, as a controller finishing a sync does.
type slowController struct {
	linger   time.Duration
	finished atomic.Bool
}

func (c *slowController) Run(ctx context.Context, _ int) {
	<-ctx.Done()
	time.Sleep(c.linger)
	c.finished.Store(true)
}

func (c *slowController) Sync(context.Context, factory.SyncContext) error { return nil }
func (c *slowController) Name() string                                    { return "slow" }

// TestRunAllWaitsForEveryController: the driver set reports stopped only when every controller has returned, so
// the presence controller never starts a new set while the old one still writes.
func TestRunAllWaitsForEveryController(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	fast, slow := &slowController{}, &slowController{linger: 300 * time.Millisecond}
	done := runAll(ctx, []factory.Controller{fast, slow})
	select {
	case <-done:
		t.Fatal("done before the context ended")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	<-done
	if !fast.finished.Load() || !slow.finished.Load() {
		t.Fatal("done closed while a controller was still running")
	}
}
