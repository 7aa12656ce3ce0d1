// Command node-driver-registrar-standin is a test stand-in for the kubernetes-csi node-driver-registrar sidecar,
// which the Go module proxy does not serve. It reads the driver's name from the CSI socket (GetPluginInfo), serves
// the kubelet plugin-registration API (k8s.io/kubelet pluginregistration v1) on <registration dir>/<name>-reg.sock
// so that the kubelet registers the driver's host socket, optionally serves /healthz, and removes its socket on
// SIGTERM. It takes the real sidecar's flags. It is for the local test cluster only, never shipped.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/openshift/aws-efs-csi/driver/pkg/version"
	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarcmd"
)

const name = "node-driver-registrar-standin"

func main() { sidecarcmd.Main(run) }

// run parses the flags, registers and serves until ctx ends or the kubelet reports a failed registration; it
// returns the process exit code.
func run(ctx context.Context, args []string) int {
	opts, ignored, err := parseOptions(args)
	if err != nil {
		return sidecarcmd.ExitCode(name, err, os.Stderr)
	}
	if opts.Version {
		fmt.Println(name, version.Get())
		return 0
	}
	sidecarcmd.WarnIgnored("node-driver-registrar", ignored)
	if opts.Mode == probeMode {
		return 0
	}
	klog.InfoS("Starting", "standIn", name, "build", version.Get().String())
	// The real registrar waits for the driver's socket up to 30 s (csi-lib-utils' default) and bounds the call.
	driverName, err := sidecarcmd.ReadDriverName(ctx, opts.CSIAddress, opts.Timeout)
	if err != nil {
		if ctx.Err() != nil {
			return 0 // stopped while waiting for the driver
		}
		klog.ErrorS(err, "Cannot read the CSI driver's name", "csiAddress", opts.CSIAddress)
		return 1
	}
	if err := serve(ctx, opts, driverName); err != nil {
		klog.ErrorS(err, "Stopped")
		return 1
	}
	return 0
}

// errRegistrationFailed is returned when the kubelet reports that it could not register the driver.
var errRegistrationFailed = errors.New("the kubelet failed to register the driver")

// serve listens on the registration socket (and /healthz) until ctx ends or the kubelet reports a failure. The
// socket is removed on every way out: stopping the gRPC server closes the listener, and closing a unix listener
// unlinks its socket file.
func serve(ctx context.Context, opts *Options, driverName string) error {
	socket := opts.socketPath(driverName)
	l, err := listenRegistration(socket)
	if err != nil {
		return err
	}
	failed := make(chan string, 1)
	srv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(srv, &registrationServer{driverName: driverName,
		endpoint: opts.KubeletRegistrationPath, failed: failed})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	klog.InfoS("Serving the kubelet plugin-registration API", "socket", socket, "driverName", driverName,
		"endpoint", opts.KubeletRegistrationPath)

	if addr := opts.healthAddress(); addr != "" {
		hl, err := net.Listen("tcp", addr)
		if err != nil {
			srv.Stop()
			return fmt.Errorf("--http-endpoint/--health-port %s: %w", addr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/healthz", healthz{socket: socket, driverName: driverName, timeout: opts.Timeout})
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(hl) }()
		defer func() { _ = hs.Close() }()
		klog.InfoS("Serving health checks", "address", hl.Addr().String())
	}

	select {
	case <-ctx.Done():
		klog.InfoS("Stopping on signal; removing the registration socket", "socket", socket)
		stopGracefully(srv)
		return nil
	case msg := <-failed:
		stopGracefully(srv) // lets the kubelet's NotifyRegistrationStatus call complete
		return fmt.Errorf("%w: %s", errRegistrationFailed, msg)
	case err := <-served:
		return fmt.Errorf("registration server: %w", err)
	}
}

// stopGracefully finishes the calls in flight, for at most 5 s.
func stopGracefully(srv *grpc.Server) {
	t := time.AfterFunc(5*time.Second, srv.Stop)
	srv.GracefulStop()
	t.Stop()
}
