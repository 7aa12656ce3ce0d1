package main

import (
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/driver"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
)

// Mode selects which CSI services the process serves.
type Mode string

// The modes of DESIGN.md §2: node-only machinery never runs in the controller and the reverse.
const (
	ModeController Mode = "controller"
	ModeNode       Mode = "node"
	ModeAll        Mode = "all"
)

var modes = []Mode{ModeController, ModeNode, ModeAll}

// Options holds every command-line setting of aws-efs-csi-driver. docs/driver/options.md is the user's copy.
type Options struct {
	// Version prints the build provenance and exits.
	Version bool
	// Mode is controller, node or all.
	Mode Mode
	// Endpoint is the CSI gRPC listen address, unix:///path/to/csi.sock.
	Endpoint string
	// Region is the AWS region; empty: instance metadata, then AWS_REGION.
	Region string
	// AvailabilityZone is the zone the driver runs in; empty: instance metadata.
	AvailabilityZone string
	// HTTPEndpoint serves Prometheus /metrics when non-empty (host:port).
	HTTPEndpoint string
	// MetricsCertFile and MetricsKeyFile serve /metrics over TLS when both are set.
	MetricsCertFile, MetricsKeyFile string
	// Tags are added to every access point the controller creates: "key:value key2:value2".
	Tags string
	// DeleteAccessPointRootDir deletes an access point's root directory on DeleteVolume.
	DeleteAccessPointRootDir bool
	// AccessPointRootDirWorkDir holds the temporary mounts of root-directory deletion.
	AccessPointRootDirWorkDir string
	// AdaptiveRetryMode selects the AWS SDK's adaptive retryer; otherwise the standard one.
	AdaptiveRetryMode bool
	// GIDResyncPeriod is how old the controller's view of a file system's GIDs may get before it lists again.
	GIDResyncPeriod time.Duration
	// DebugLogs sets klog verbosity 5.
	DebugLogs bool
	// Node holds the node service's settings (node_options.go).
	Node NodeOptions

	// ignored holds the upstream flags this driver accepts and ignores (S3 Files).
	ignored ignoredFlags

	klogFlags *flag.FlagSet
}

// AddFlags binds the options, and klog's flags, onto fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Version, "version", false, "Print the driver version, commit and tree state, then exit.")
	fs.StringVar((*string)(&o.Mode), "mode", string(ModeAll), "Which CSI services to serve: controller, node or all. Unset: the "+modeEnv+" environment variable, else all.")
	fs.StringVar(&o.Endpoint, "endpoint", "unix:///var/lib/csi/sockets/pluginproxy/csi.sock", "CSI gRPC endpoint: unix:///absolute/path, unix:/absolute/path or tcp://host:port.")
	fs.StringVar(&o.Region, "region", "", "AWS region. Empty: instance metadata, else the AWS_REGION environment variable.")
	fs.StringVar(&o.AvailabilityZone, "availability-zone", "", "Availability zone the driver runs in. Empty: instance metadata.")
	fs.StringVar(&o.HTTPEndpoint, "http-endpoint", "", "host:port to serve Prometheus metrics on at /metrics (controller). Empty: no metrics server.")
	fs.StringVar(&o.MetricsCertFile, "metrics-cert-file", "", "TLS certificate for the metrics server; needs --metrics-key-file.")
	fs.StringVar(&o.MetricsKeyFile, "metrics-key-file", "", "TLS key for the metrics server; needs --metrics-cert-file.")
	fs.StringVar(&o.Tags, "tags", "", `Tags for every access point the controller creates: space-separated key:value pairs; a backslash escapes ':' and ' '.`)
	fs.BoolVar(&o.DeleteAccessPointRootDir, "delete-access-point-root-dir", false, "Delete an access point's root directory and its data on DeleteVolume (the controller mounts the file system; needs a privileged controller).")
	fs.StringVar(&o.AccessPointRootDirWorkDir, "access-point-root-dir-work-dir", "/var/lib/csi/pv", "Directory for the temporary mounts of --delete-access-point-root-dir.")
	fs.BoolVar(&o.AdaptiveRetryMode, "adaptive-retry-mode", true, "Use the AWS SDK adaptive retry mode (client-side rate limiting when throttled); false: standard retries.")
	fs.DurationVar(&o.GIDResyncPeriod, "gid-resync-period", time.Minute, "How long the controller trusts its view of a file system's used GIDs before listing the access points again.")
	fs.BoolVar(&o.DebugLogs, "debug-logs", false, "Log at verbosity 5 (request payloads, secrets stripped).")
	o.Node.AddFlags(fs)
	o.ignored.addFlags(fs)
	o.klogFlags = flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(o.klogFlags)
	fs.AddGoFlagSet(o.klogFlags)
}

// modeEnv selects the mode when --mode is not given. The upstream driver has no --mode flag and refuses unknown
// flags but ignores unknown environment variables, so the operator's manifests set this instead of --mode and
// start either driver.
const modeEnv = "EFS_CSI_DRIVER_MODE"

// ApplyEnv fills what the flags in fs left unset from the environment: the mode from EFS_CSI_DRIVER_MODE. An
// explicit --mode wins.
func (o *Options) ApplyEnv(fs *pflag.FlagSet, getenv func(string) string) {
	if m := getenv(modeEnv); m != "" && !fs.Changed("mode") {
		o.Mode = Mode(m)
	}
}

// Validate checks the options together and names the flag and its accepted form on error.
func (o *Options) Validate() error {
	valid := false
	for _, m := range modes {
		valid = valid || o.Mode == m
	}
	if !valid {
		return fmt.Errorf("--mode (or %s) %q: want one of %s", modeEnv, o.Mode, joinModes())
	}
	if _, _, err := driver.ParseEndpoint(o.Endpoint); err != nil {
		return fmt.Errorf("--%w", err)
	}
	if o.HTTPEndpoint != "" {
		if _, _, err := net.SplitHostPort(o.HTTPEndpoint); err != nil {
			return fmt.Errorf("--http-endpoint %q: want host:port, such as 0.0.0.0:3301", o.HTTPEndpoint)
		}
	}
	if (o.MetricsCertFile == "") != (o.MetricsKeyFile == "") {
		return fmt.Errorf("--metrics-cert-file and --metrics-key-file must be set together")
	}
	if o.MetricsCertFile != "" && o.HTTPEndpoint == "" {
		return fmt.Errorf("--metrics-cert-file needs --http-endpoint")
	}
	if o.GIDResyncPeriod <= 0 {
		return fmt.Errorf("--gid-resync-period %s: want a positive duration such as 1m", o.GIDResyncPeriod)
	}
	if o.DeleteAccessPointRootDir && !strings.HasPrefix(o.AccessPointRootDirWorkDir, "/") {
		return fmt.Errorf("--access-point-root-dir-work-dir %q: want an absolute path", o.AccessPointRootDirWorkDir)
	}
	if err := o.Node.Validate(o.Mode == ModeController); err != nil {
		return err
	}
	return nil
}

// Warnings lists what the options accept but do not act on, one line each, for the log: upstream flags this
// driver does not implement, node flags given to a controller-only process, and malformed --tags entries.
func (o *Options) Warnings() []string {
	w := o.ignored.warnings()
	if o.Mode == ModeController {
		w = append(w, o.Node.controllerWarnings()...)
	}
	_, tagWarnings := provision.ParseTags(o.Tags)
	return append(w, tagWarnings...)
}

func (o *Options) runsController() bool { return o.Mode == ModeController || o.Mode == ModeAll }

func (o *Options) runsNode() bool { return o.Mode == ModeNode || o.Mode == ModeAll }

func joinModes() string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
