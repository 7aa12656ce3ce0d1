package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/connection"
	"github.com/kubernetes-csi/csi-lib-utils/rpc"
	"k8s.io/klog/v2"
)

// errNotReady is the answer of a driver whose Probe says ready=false.
var errNotReady = errors.New("driver responded but is not ready")

// prober answers GET /healthz with the driver's CSI Probe over a fresh connection: 200 ok when ready, 500 with
// the error otherwise (no connection within the timeout, Probe failed, or not ready).
type prober struct {
	address string
	timeout time.Duration
}

func (p prober) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := p.probe(r.Context()); err != nil {
		klog.ErrorS(err, "Health check failed", "csiAddress", p.address)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(err.Error()))
		return
	}
	klog.V(5).InfoS("Health check succeeded")
	_, _ = w.Write([]byte("ok"))
}

func (p prober) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	conn, err := connection.Connect(ctx, p.address, nil, connection.WithTimeout(p.timeout))
	if err != nil {
		return fmt.Errorf("connect to the CSI driver at %s: %w", p.address, err)
	}
	defer func() { _ = conn.Close() }()
	ready, err := rpc.Probe(ctx, conn)
	if err != nil {
		return fmt.Errorf("CSI Probe: %w", err)
	}
	if !ready {
		return errNotReady
	}
	return nil
}
