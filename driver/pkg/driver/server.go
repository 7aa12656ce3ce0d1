package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/protosanitizer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// RPCObserver receives one report per CSI RPC.
type RPCObserver interface {
	ObserveRPC(method, code string, d time.Duration)
}

// Services are the CSI services one server serves; Controller and Node are nil when the mode does not run them.
type Services struct {
	Identity   csi.IdentityServer
	Controller csi.ControllerServer
	Node       csi.NodeServer
}

// NewServer returns a gRPC server with the services registered and an interceptor that logs every call (payloads
// at V(5) through protosanitizer, so secrets never reach the log) and reports it to obs (may be nil).
func NewServer(s Services, obs RPCObserver) *grpc.Server {
	srv := grpc.NewServer(grpc.UnaryInterceptor(interceptor(obs, time.Now)))
	csi.RegisterIdentityServer(srv, s.Identity)
	if s.Controller != nil {
		csi.RegisterControllerServer(srv, s.Controller)
	}
	if s.Node != nil {
		csi.RegisterNodeServer(srv, s.Node)
	}
	return srv
}

func interceptor(obs RPCObserver, now func() time.Time) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		v := klog.Level(4)
		if info.FullMethod == "/csi.v1.Identity/Probe" {
			v = 6
		}
		klog.V(v).InfoS("GRPC call", "method", info.FullMethod)
		klog.V(5).InfoS("GRPC request", "method", info.FullMethod, "request", protosanitizer.StripSecrets(req))
		start := now()
		resp, err := handler(ctx, req)
		code := status.Code(err)
		if obs != nil {
			obs.ObserveRPC(info.FullMethod, code.String(), now().Sub(start))
		}
		if err != nil {
			klog.ErrorS(err, "GRPC error", "method", info.FullMethod, "code", code.String())
		} else {
			klog.V(5).InfoS("GRPC response", "method", info.FullMethod, "response", protosanitizer.StripSecrets(resp))
		}
		return resp, err
	}
}

// SocketPath returns the socket file of a unix CSI endpoint. Both spellings of a unix URL are accepted:
// unix:///absolute/path and unix:/absolute/path (the form the upstream manifests and the OpenShift operator use).
func SocketPath(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "unix" || u.Host != "" || u.Path == "" || !filepath.IsAbs(u.Path) {
		return "", fmt.Errorf("endpoint %q: want unix:///absolute/path/to/csi.sock, unix:/absolute/path/to/csi.sock or tcp://host:port", endpoint)
	}
	return u.Path, nil
}

// ParseEndpoint returns the network ("unix" or "tcp") and address of a CSI endpoint: a unix URL (see SocketPath)
// or tcp://host:port, which upstream also accepts.
func ParseEndpoint(endpoint string) (network, address string, err error) {
	if rest, ok := strings.CutPrefix(endpoint, "tcp://"); ok {
		if _, _, err := net.SplitHostPort(rest); err != nil || strings.Contains(rest, "/") {
			return "", "", fmt.Errorf("endpoint %q: want tcp://host:port, such as tcp://127.0.0.1:10000", endpoint)
		}
		return "tcp", rest, nil
	}
	path, err := SocketPath(endpoint)
	return "unix", path, err
}

// Listen opens endpoint (see ParseEndpoint); for a unix socket it removes a stale socket file first.
func Listen(endpoint string) (net.Listener, error) {
	network, addr, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if network == "tcp" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", endpoint, err)
		}
		return l, nil
	}
	if err := os.Remove(addr); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket %s: %w", addr, err)
	}
	if err := os.MkdirAll(filepath.Dir(addr), 0o750); err != nil {
		return nil, fmt.Errorf("create socket directory: %w", err)
	}
	l, err := net.Listen("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// Serve serves srv on l until ctx ends, then stops gracefully.
func Serve(ctx context.Context, srv *grpc.Server, l net.Listener) error {
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	klog.V(2).InfoS("Serving CSI", "address", l.Addr().String())
	if err := srv.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve CSI: %w", err)
	}
	return nil
}
