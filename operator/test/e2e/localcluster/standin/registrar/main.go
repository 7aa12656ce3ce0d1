// Command registrar is a STAND-IN for kubernetes-csi's node-driver-registrar, which the Go module proxy does not
// serve: just enough for the local cluster to run the node DaemonSet as the operator ships it. It asks the CSI
// driver for its name (GetPluginInfo on --csi-address), serves the kubelet's plugin registration API
// (k8s.io/kubelet pluginregistration v1) on <--plugin-registration-path>/<driver>-reg.sock, announcing
// --kubelet-registration-path, exits when the kubelet reports a failed registration, and answers /healthz on
// --http-endpoint while its socket exists. Flags it does not use (-v) are accepted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

type options struct {
	csiAddress, kubeletRegistrationPath, pluginRegistrationPath, httpEndpoint string
}

func main() {
	var o options
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&o.csiAddress, "csi-address", "/run/csi/socket", "path of the CSI driver's socket in this container")
	fs.StringVar(&o.kubeletRegistrationPath, "kubelet-registration-path", "", "path of the CSI driver's socket on the node, as the kubelet sees it (required)")
	fs.StringVar(&o.pluginRegistrationPath, "plugin-registration-path", "/registration", "the kubelet's plugin registration directory in this container")
	fs.StringVar(&o.httpEndpoint, "http-endpoint", "", "address of the /healthz server (none when empty)")
	fs.String("v", "", "log level (accepted, ignored)")
	_ = fs.Parse(os.Args[1:])
	if o.kubeletRegistrationPath == "" {
		log.Fatal("registrar (stand-in): --kubelet-registration-path is required: the driver socket's path on the node")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatalf("registrar (stand-in): %v", err)
	}
}

func run(ctx context.Context, o options) error {
	name, err := driverName(ctx, o.csiAddress)
	if err != nil {
		return err
	}
	log.Printf("registrar (stand-in): driver %s, kubelet registration path %s", name, o.kubeletRegistrationPath)
	socket := filepath.Join(o.pluginRegistrationPath, name+"-reg.sock")
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	l, err := net.Listen("unix", socket)
	if err != nil {
		return err
	}
	defer os.Remove(socket)
	failed := make(chan error, 1)
	srv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(srv, &registration{name: name, endpoint: o.kubeletRegistrationPath, failed: failed})
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	if o.httpEndpoint != "" {
		hs := &http.Server{Addr: o.httpEndpoint, Handler: healthz(socket), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = hs.ListenAndServe() }()
		defer hs.Close()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-failed:
		return err
	}
}

// driverName asks the driver for its name, waiting for its socket to answer.
func driverName(ctx context.Context, address string) (string, error) {
	conn, err := grpc.NewClient("unix://"+address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	id := csi.NewIdentityClient(conn)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := id.GetPluginInfo(cctx, &csi.GetPluginInfoRequest{})
		cancel()
		if err == nil {
			return info.GetName(), nil
		}
		log.Printf("registrar (stand-in): GetPluginInfo on %s: %v; retrying", address, err)
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no answer from the CSI driver on %s: %w", address, err)
		case <-time.After(time.Second):
		}
	}
}

// registration is the plugin registration service the kubelet calls.
type registration struct {
	registerapi.UnimplementedRegistrationServer
	name, endpoint string
	failed         chan<- error
}

func (r *registration) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type: registerapi.CSIPlugin, Name: r.name, Endpoint: r.endpoint, SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registration) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if !s.PluginRegistered {
		// As node-driver-registrar: exit, so that the kubelet restarts the container and registration is retried.
		select {
		case r.failed <- fmt.Errorf("the kubelet failed to register %s: %s", r.name, s.Error):
		default:
		}
	} else {
		log.Printf("registrar (stand-in): the kubelet registered %s", r.name)
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// healthz answers 200 while the registration socket exists.
func healthz(socket string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if _, err := os.Stat(socket); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}
