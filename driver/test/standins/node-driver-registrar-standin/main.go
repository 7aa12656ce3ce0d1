// Command node-driver-registrar-standin is a test stand-in for the kubernetes-csi node-driver-registrar sidecar,
// which the Go module proxy does not serve. It reads the driver's name from the CSI socket (GetPluginInfo), serves
// the kubelet plugin-registration API (k8s.io/kubelet pluginregistration v1) on <registration dir>/<name>-reg.sock
// so that the kubelet registers the driver's host socket, optionally serves /healthz, and removes its socket on
// SIGTERM. It takes the real sidecar's flags. It is for the local test cluster only, never shipped.
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
	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/openshift/aws-efs-csi/driver/pkg/version"
)

const name = "node-driver-registrar-standin"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	klog.Flush()
	os.Exit(code)
}

// run parses the flags, registers and serves until ctx ends or the kubelet reports a failed registration; it
// returns the process exit code.
func run(ctx context.Context, args []string) int {
	opts, ignored, err := parseOptions(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 2
	}
	if opts.Version {
		fmt.Println(name, version.Get())
		return 0
	}
	for _, f := range ignored {
		klog.Warningf("%s is a flag of the real node-driver-registrar that this stand-in ignores", f)
	}
	if opts.Mode == probeMode {
		return 0
	}
	klog.InfoS("Starting", "standIn", name, "build", version.Get().String())
	driverName, err := readDriverName(ctx, opts.CSIAddress, opts.Timeout)
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

// readDriverName waits for the driver's socket (up to 30 s, as the real registrar) and asks its name.
func readDriverName(ctx context.Context, address string, timeout time.Duration) (string, error) {
	conn, err := connection.Connect(ctx, address, nil)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", address, err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return rpc.GetDriverName(ctx, conn)
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
