// Command livenessprobe-standin is a test stand-in for the kubernetes-csi livenessprobe sidecar, which the Go
// module proxy does not serve. Once the driver answers on its CSI socket, it serves GET /healthz, which calls the
// driver's CSI Identity Probe and answers 200 when ready, 500 with the error otherwise. It takes the real
// sidecar's flags. It is for the local test cluster only, never shipped.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/connection"
	"github.com/kubernetes-csi/csi-lib-utils/rpc"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/version"
)

const name = "livenessprobe-standin"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	klog.Flush()
	os.Exit(code)
}

// run parses the flags and serves /healthz until ctx ends; it returns the process exit code.
func run(ctx context.Context, args []string) int {
	opts, ignored, err := parseOptions(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 2
	}
	for _, f := range ignored {
		klog.Warningf("%s is a flag of the real livenessprobe that this stand-in ignores", f)
	}
	klog.InfoS("Starting", "standIn", name, "build", version.Get().String())
	// Like the real sidecar: wait for the driver without a deadline and ask its name before serving, so that
	// the kubelet's probe is refused (fails) until the driver is up instead of this container crashing.
	driverName, err := readDriverName(ctx, opts.CSIAddress)
	if err != nil {
		if ctx.Err() != nil {
			return 0
		}
		klog.ErrorS(err, "Cannot read the CSI driver's name", "csiAddress", opts.CSIAddress)
		return 1
	}
	if err := serve(ctx, opts.listenAddress(), prober{address: opts.CSIAddress, timeout: opts.ProbeTimeout}, driverName); err != nil {
		klog.ErrorS(err, "Stopped")
		return 1
	}
	return 0
}

func readDriverName(ctx context.Context, address string) (string, error) {
	conn, err := connection.Connect(ctx, address, nil, connection.WithTimeout(0))
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", address, err)
	}
	defer func() { _ = conn.Close() }()
	return rpc.GetDriverName(ctx, conn)
}

// serve answers /healthz on addr until ctx ends.
func serve(ctx context.Context, addr string, p prober, driverName string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http-endpoint/--health-port %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", p)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()
	klog.InfoS("Serving health checks", "address", l.Addr().String(), "driverName", driverName)
	select {
	case <-ctx.Done():
		klog.InfoS("Stopping on signal")
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shutdown)
	case err := <-served:
		return err
	}
}
