package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarcmd"
	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarflags"
)

// defaultHealthPort is the real livenessprobe's --health-port default.
const defaultHealthPort = "9808"

// Options are the real livenessprobe's flags that this stand-in implements, with the same names and defaults.
type Options struct {
	// CSIAddress is the driver's socket as this container sees it.
	CSIAddress string
	// HealthPort is the deprecated way to place /healthz: every interface, this port.
	HealthPort string
	// HTTPEndpoint is the address of the /healthz server; it overrides HealthPort.
	HTTPEndpoint string
	// ProbeTimeout bounds each health check: connecting to the driver and its Probe call.
	ProbeTimeout time.Duration
	// MetricsAddress is the real sidecar's deprecated metrics server; only its conflict with HTTPEndpoint is
	// checked, this stand-in serves no metrics.
	MetricsAddress string
}

// AddFlags binds the options to fs and accepts the real livenessprobe's other flags with a warning.
func (o *Options) AddFlags(fs *sidecarflags.FlagSet) {
	fs.StringVar(&o.CSIAddress, "csi-address", "/run/csi/socket", "Address of the CSI driver socket.")
	fs.StringVar(&o.HealthPort, "health-port", defaultHealthPort, "(deprecated) TCP port of /healthz on every interface; --http-endpoint overrides it.")
	fs.StringVar(&o.HTTPEndpoint, "http-endpoint", "", "TCP address of the /healthz server, e.g. 127.0.0.1:10303.")
	fs.DurationVar(&o.ProbeTimeout, "probe-timeout", 3*time.Second, "Timeout of one health check.")
	fs.StringVar(&o.MetricsAddress, "metrics-address", "", "(deprecated) accepted and ignored: this stand-in serves no metrics.")
	fs.AddLogging()
	fs.Ignore(false, "metrics-path")
}

// Validate checks the rules that span flags, as the real livenessprobe does, and the values it would only find
// wrong when listening.
func (o *Options) Validate() error {
	var errs []error
	if o.HealthPort != defaultHealthPort && o.HTTPEndpoint != "" {
		errs = append(errs, fmt.Errorf("--health-port %s and --http-endpoint %s are both set: set only one", o.HealthPort, o.HTTPEndpoint))
	}
	if o.MetricsAddress != "" && o.HTTPEndpoint != "" {
		errs = append(errs, fmt.Errorf("--metrics-address %s and --http-endpoint %s are both set: set only one", o.MetricsAddress, o.HTTPEndpoint))
	}
	if p, err := strconv.Atoi(o.HealthPort); err != nil || p < 0 || p > 65535 {
		errs = append(errs, fmt.Errorf("--health-port %q: want a port in [0, 65535]", o.HealthPort))
	}
	if o.ProbeTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--probe-timeout %s: want a positive duration such as 3s", o.ProbeTimeout))
	}
	return errors.Join(errs...)
}

// listenAddress is where /healthz listens.
func (o *Options) listenAddress() string {
	if o.HTTPEndpoint != "" {
		return o.HTTPEndpoint
	}
	return net.JoinHostPort("0.0.0.0", o.HealthPort)
}

// parseOptions parses and validates the command line; it also returns the real livenessprobe's flags that were
// set and are ignored here.
func parseOptions(args []string) (*Options, []string, error) {
	var o Options
	ignored, err := sidecarcmd.Parse(name, &o, args)
	if err != nil {
		return nil, nil, err
	}
	if o.MetricsAddress != "" {
		ignored = append(ignored, "--metrics-address="+o.MetricsAddress)
	}
	return &o, ignored, nil
}
