package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarcmd"
	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarflags"
)

// probeMode is the real registrar's deprecated --mode that makes it exit 0 at once (an old exec probe).
const probeMode = "kubelet-registration-probe"

// Options are the real node-driver-registrar's flags that this stand-in implements, with the same names and
// defaults.
type Options struct {
	// CSIAddress is the driver's socket as this container sees it; the driver's name is read from it.
	CSIAddress string
	// KubeletRegistrationPath is the driver's socket as the kubelet sees it on the host: the endpoint registered.
	KubeletRegistrationPath string
	// PluginRegistrationPath is the kubelet's plugins_registry directory as this container sees it; the
	// registration socket <driver name>-reg.sock is created there.
	PluginRegistrationPath string
	// HTTPEndpoint is the address of the /healthz server; empty disables it.
	HTTPEndpoint string
	// HealthPort is the deprecated form of HTTPEndpoint: /healthz on every interface at this port; 0 disables it.
	HealthPort int
	// Timeout bounds each call to the driver and the health check's call to the registration socket.
	Timeout time.Duration
	// Mode probeMode exits 0 at once; any other value registers.
	Mode string
	// Version prints the version and exits.
	Version bool
}

// AddFlags binds the options to fs and accepts the real registrar's other flags with a warning.
func (o *Options) AddFlags(fs *sidecarflags.FlagSet) {
	fs.StringVar(&o.CSIAddress, "csi-address", "/run/csi/socket", "Path of the CSI driver socket to read the driver name from.")
	fs.StringVar(&o.KubeletRegistrationPath, "kubelet-registration-path", "", "Path of the CSI driver socket on the host, registered with the kubelet (required).")
	fs.StringVar(&o.PluginRegistrationPath, "plugin-registration-path", "/registration", "Path of the kubelet's plugin registration directory.")
	fs.StringVar(&o.HTTPEndpoint, "http-endpoint", "", "TCP address of the /healthz server (e.g. 127.0.0.1:10305); empty disables it.")
	fs.IntVar(&o.HealthPort, "health-port", 0, "(deprecated) TCP port of the /healthz server on every interface; 0 disables it.")
	fs.DurationVar(&o.Timeout, "timeout", time.Second, "Timeout of each call to the CSI driver.")
	fs.StringVar(&o.Mode, "mode", "", "(deprecated) "+probeMode+" exits 0 without registering.")
	fs.BoolVar(&o.Version, "version", false, "Print the version and exit.")
	fs.AddLogging()
	fs.Ignore(false, "connection-timeout")
	fs.Ignore(true, "enable-pprof")
}

// Validate checks the rules that span flags; --version needs no other flag.
func (o *Options) Validate() error {
	if o.Version {
		return nil
	}
	var errs []error
	if o.KubeletRegistrationPath == "" {
		errs = append(errs, errors.New("--kubelet-registration-path is required: the driver socket's path on the host, e.g. /var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock"))
	} else if !filepath.IsAbs(o.KubeletRegistrationPath) {
		errs = append(errs, fmt.Errorf("--kubelet-registration-path %q: want an absolute path on the host", o.KubeletRegistrationPath))
	}
	if o.HealthPort > 0 && o.HTTPEndpoint != "" {
		errs = append(errs, fmt.Errorf("--health-port %d and --http-endpoint %q are both set: set only one", o.HealthPort, o.HTTPEndpoint))
	}
	if o.HealthPort < 0 || o.HealthPort > 65535 {
		errs = append(errs, fmt.Errorf("--health-port %d: want a port in [0, 65535]", o.HealthPort))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: want a positive duration such as 1s", o.Timeout))
	}
	return errors.Join(errs...)
}

// healthAddress is where /healthz listens, "" when disabled.
func (o *Options) healthAddress() string {
	if o.HealthPort > 0 {
		return ":" + strconv.Itoa(o.HealthPort)
	}
	return o.HTTPEndpoint
}

// socketPath is the registration socket the kubelet's plugin watcher finds for driverName.
func (o *Options) socketPath(driverName string) string {
	return filepath.Join(o.PluginRegistrationPath, driverName+"-reg.sock")
}

// parseOptions parses and validates the command line; it also returns the real registrar's flags that were set
// and are ignored here.
func parseOptions(args []string) (*Options, []string, error) {
	var o Options
	ignored, err := sidecarcmd.Parse(name, &o, args)
	if err != nil {
		return nil, nil, err
	}
	return &o, ignored, nil
}
