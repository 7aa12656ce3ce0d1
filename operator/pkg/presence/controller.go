package presence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// Gauge is the metric reporting a missing ClusterCSIDriver: 1 while it is missing, 0 once it exists.
type Gauge interface {
	Set(float64)
}

// StartFunc starts the driver's controllers; they stop when ctx is cancelled, and the returned channel closes
// once they have stopped.
type StartFunc func(ctx context.Context) (<-chan struct{}, error)

// Options configure the controller.
type Options struct {
	// Name is the ClusterCSIDriver to wait for.
	Name string
	// Drivers lists ClusterCSIDrivers.
	Drivers operatorlisters.ClusterCSIDriverLister
	// DriversInformer is the informer behind Drivers.
	DriversInformer factory.Informer
	// Missing is set to 1 while the ClusterCSIDriver does not exist.
	Missing Gauge
	// Start starts the driver's controllers.
	Start StartFunc
	// Clients and Assets apply the operator's monitoring objects; Files are asset names.
	Clients *resourceapply.ClientHolder
	Assets  resourceapply.AssetFunc
	Files   []string
	Resync  time.Duration
}

// Controller is the presence controller.
type Controller struct {
	opts Options

	mu      sync.Mutex
	cancel  context.CancelFunc
	stopped <-chan struct{}
	// warned remembers objects whose API is missing (no monitoring stack), so that is logged once.
	warned map[string]bool
}

// New returns the controller and the Controller that holds the driver set's state.
func New(opts Options, recorder events.Recorder) (factory.Controller, *Controller) {
	c := &Controller{opts: opts, warned: map[string]bool{}}
	return factory.New().
		WithInformers(opts.DriversInformer).
		WithSync(c.sync).
		ResyncEvery(opts.Resync).
		ToController("AWSEFSClusterCSIDriverPresenceController", recorder.WithComponentSuffix("presence")), c
}

// Running reports whether the driver's controllers run.
func (c *Controller) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancel != nil
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	applyErr := c.applyMonitoring(ctx, syncCtx.Recorder())
	if ctx.Err() != nil {
		// Shutting down: nothing to report.
		return nil
	}
	_, err := c.opts.Drivers.Get(c.opts.Name)
	switch {
	case apierrors.IsNotFound(err):
		c.opts.Missing.Set(1)
		if c.Running() {
			klog.InfoS("ClusterCSIDriver is gone; stopping the driver controllers", "name", c.opts.Name)
			c.stop()
		} else {
			klog.V(2).InfoS("Waiting for the ClusterCSIDriver before installing the driver; create it to install the driver", "name", c.opts.Name)
		}
		return applyErr
	case err != nil:
		return errors.Join(err, applyErr)
	}
	c.opts.Missing.Set(0)
	if !c.Running() {
		klog.InfoS("ClusterCSIDriver exists; starting the driver controllers", "name", c.opts.Name)
		if err := c.start(ctx); err != nil {
			return errors.Join(err, applyErr)
		}
	}
	return applyErr
}

func (c *Controller) start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The driver set outlives this sync; it stops when the operator's context or stop() cancels it.
	setCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopped, err := c.opts.Start(setCtx)
	if err != nil {
		cancel()
		return fmt.Errorf("starting the driver controllers: %w", err)
	}
	go func() {
		<-ctx.Done()
		cancel()
	}()
	c.cancel, c.stopped = cancel, stopped
	return nil
}

// stop cancels the driver set and waits for it to finish.
func (c *Controller) stop() {
	c.mu.Lock()
	cancel, stopped := c.cancel, c.stopped
	c.cancel, c.stopped = nil, nil
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-stopped
	}
}

func (c *Controller) applyMonitoring(ctx context.Context, recorder events.Recorder) error {
	var errs []error
	for _, r := range resourceapply.ApplyDirectly(ctx, c.opts.Clients, recorder, nil, c.opts.Assets, c.opts.Files...) {
		if r.Error == nil {
			continue
		}
		if apierrors.IsNotFound(r.Error) || isNoMatch(r.Error) {
			if !c.warned[r.File] {
				c.warned[r.File] = true
				klog.InfoS("Not applying a monitoring object: its API is not installed", "file", r.File, "err", r.Error)
			}
			continue
		}
		errs = append(errs, fmt.Errorf("applying %s: %w", r.File, r.Error))
	}
	return errors.Join(errs...)
}
