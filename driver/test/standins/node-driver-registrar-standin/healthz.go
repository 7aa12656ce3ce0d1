package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/connection"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// healthz answers GET /healthz as the real registrar does: 404 while the registration socket is missing (the
// preStop hook or someone else removed it), 500 when it does not answer GetInfo with our driver's name, 200 ok.
type healthz struct {
	socket, driverName string
	timeout            time.Duration
}

func (h healthz) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fi, err := os.Stat(h.socket)
	switch {
	case os.IsNotExist(err):
		h.fail(w, http.StatusNotFound, fmt.Errorf("registration socket %s does not exist", h.socket))
		return
	case err != nil:
		h.fail(w, http.StatusInternalServerError, err)
		return
	case fi.Mode()&os.ModeSocket == 0:
		h.fail(w, http.StatusInternalServerError, fmt.Errorf("registration socket %s is a %s, not a socket", h.socket, fi.Mode().Type()))
		return
	}
	if err := h.check(r.Context()); err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	klog.V(5).InfoS("Health check succeeded")
	_, _ = w.Write([]byte("ok"))
}

// check calls GetInfo on the registration socket, as the kubelet would.
func (h healthz) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	conn, err := connection.Connect(ctx, h.socket, nil, connection.WithTimeout(h.timeout))
	if err != nil {
		return fmt.Errorf("connect to registration socket %s: %w", h.socket, err)
	}
	defer func() { _ = conn.Close() }()
	info, err := registerapi.NewRegistrationClient(conn).GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		return fmt.Errorf("GetInfo on registration socket %s: %w", h.socket, err)
	}
	if info.GetName() != h.driverName {
		return fmt.Errorf("registration socket %s serves driver %q, want %q", h.socket, info.GetName(), h.driverName)
	}
	return nil
}

func (h healthz) fail(w http.ResponseWriter, code int, err error) {
	klog.ErrorS(err, "Health check failed")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(err.Error()))
}
