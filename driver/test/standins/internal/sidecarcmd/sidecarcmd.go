// Package sidecarcmd is the command life the two sidecar stand-ins (livenessprobe-standin and
// node-driver-registrar-standin) share, so each main package holds only what its sidecar does: the process around
// run (signals, klog flush, exit code), parsing the real sidecar's command line into the stand-in's options with
// the usage on -h and exit code 2 on a bad flag, and asking the driver for its name over the CSI socket.
package sidecarcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/connection"
	"github.com/kubernetes-csi/csi-lib-utils/rpc"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarflags"
)

// Main runs run with the command-line arguments and a context that ends on SIGINT or SIGTERM (the kubelet stops a
// container with SIGTERM), flushes klog and exits with run's code.
func Main(run func(ctx context.Context, args []string) int) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	klog.Flush()
	os.Exit(code)
}

// Options are a stand-in's options: the real sidecar's flags it binds, and the rules across them.
type Options interface {
	AddFlags(fs *sidecarflags.FlagSet)
	Validate() error
}

// Parse parses args into o for the stand-in called name and validates o; it returns the real sidecar's flags that
// were set and that the stand-in ignores. On -h or --help it prints the usage to stderr and returns flag.ErrHelp.
func Parse(name string, o Options, args []string) ([]string, error) {
	fs := sidecarflags.New(name)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return fs.Ignored(), nil
}

// ExitCode reports a Parse error on stderr as "<name>: <error>" and returns the process exit code: 0 for -h (the
// usage is printed already), 2 for a bad command line, as the flag package's commands do.
func ExitCode(name string, err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, name+":", err)
	return 2
}

// WarnIgnored logs each flag of the real sidecar (called real, e.g. "livenessprobe") that was set and that the
// stand-in ignores.
func WarnIgnored(real string, ignored []string) {
	for _, f := range ignored {
		klog.Warningf("%s is a flag of the real %s that this stand-in ignores", f, real)
	}
}

// ReadDriverName connects to the driver's CSI socket at address (opts are csi-lib-utils' connection options, e.g.
// how long to wait for the socket) and asks its name (GetPluginInfo), the call bounded by callTimeout when it is
// positive.
func ReadDriverName(ctx context.Context, address string, callTimeout time.Duration, opts ...connection.Option) (string, error) {
	conn, err := connection.Connect(ctx, address, nil, opts...)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", address, err)
	}
	defer func() { _ = conn.Close() }()
	if callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	return rpc.GetDriverName(ctx, conn)
}
