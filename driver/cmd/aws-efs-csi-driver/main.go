// Command aws-efs-csi-driver is the Amazon EFS CSI driver: the controller, node or both CSI services in one binary.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// stdout receives --version output (a variable so that tests read it).
var stdout io.Writer = os.Stdout

// run parses the flags and serves until ctx ends; it returns the process exit code.
func run(ctx context.Context, args []string) int {
	fs := pflag.NewFlagSet("aws-efs-csi-driver", pflag.ContinueOnError)
	var opts Options
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	opts.ApplyEnv(fs, os.Getenv)
	if opts.Version {
		fmt.Fprintln(stdout, version.Get().JSON())
		return 0
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "aws-efs-csi-driver:", err)
		return 2
	}
	if opts.DebugLogs {
		_ = opts.klogFlags.Set("v", "5")
	}
	for _, w := range opts.Warnings() {
		klog.Warning(w)
	}
	klog.InfoS("Starting aws-efs-csi-driver", "mode", opts.Mode, "build", version.Get().String())
	if err := serve(ctx, &opts, env{
		region: firstNonEmpty(os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION")),
		node:   readNodeEnv(os.Getenv),
	}); err != nil {
		klog.ErrorS(err, "Driver stopped")
		return 1
	}
	return 0
}

// env is what the driver reads from its environment, read once in run.
type env struct {
	region string
	node   nodeEnv
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// listenMetrics opens the metrics listener.
func listenMetrics(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http-endpoint %s: %w", addr, err)
	}
	return l, nil
}
