// Command livenessprobe-standin is a test stand-in for the kubernetes-csi livenessprobe sidecar, which the Go
// module proxy does not serve. Once the driver answers on its CSI socket, it serves GET /healthz, which calls the
// driver's CSI Identity Probe and answers 200 when ready, 500 with the error otherwise. It takes the real
// sidecar's flags. It is for the local test cluster only, never shipped.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/connection"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/version"
	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarcmd"
)

const name = "livenessprobe-standin"

func main() { sidecarcmd.Main(run) }

// run parses the flags and serves /healthz until ctx ends; it returns the process exit code.
func run(ctx context.Context, args []string) int {
	opts, ignored, err := parseOptions(args)
	if err != nil {
		return sidecarcmd.ExitCode(name, err, os.Stderr)
	}
	sidecarcmd.WarnIgnored("livenessprobe", ignored)
	klog.InfoS("Starting", "standIn", name, "build", version.Get().String())
	// Like the real sidecar: wait for the driver without a deadline and ask its name before serving, so that
	// the kubelet's probe is refused (fails) until the driver is up instead of this container crashing.
	driverName, err := sidecarcmd.ReadDriverName(ctx, opts.CSIAddress, 0, connection.WithTimeout(0))
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
