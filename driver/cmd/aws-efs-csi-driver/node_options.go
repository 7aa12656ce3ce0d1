package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/openshift/aws-efs-csi/driver/pkg/efsutils"
)

// NodeOptions are the settings of the node service (--mode=node or all). docs/driver/options.md lists them.
type NodeOptions struct {
	// MaxInflightMountCallsOptIn and MaxInflightMountCalls cap concurrent NodePublishVolume calls.
	MaxInflightMountCallsOptIn bool
	MaxInflightMountCalls      int
	// VolumeAttachLimitOptIn and VolumeAttachLimit report MaxVolumesPerNode.
	VolumeAttachLimitOptIn bool
	VolumeAttachLimit      int64
	// ForceUnmountAfterTimeout runs umount -f when a plain umount has not finished after UnmountTimeout.
	ForceUnmountAfterTimeout bool
	UnmountTimeout           time.Duration
	// VolMetricsOptIn enables NodeGetVolumeStats; the refresh period is in minutes (upstream's unit).
	VolMetricsOptIn         bool
	VolMetricsRefreshPeriod float64
	VolMetricsFsRateLimit   int
	// EFSUtilsConfOverrides is section:key=value[,…], applied to the rendered efs-utils.conf.
	EFSUtilsConfOverrides string
	// EFSCloudWatchLogEnabled sets [cloudwatch-log] enabled.
	EFSCloudWatchLogEnabled bool
	// efs-utils locations.
	EFSUtilsConfigDir, EFSUtilsLegacyConfigDir, EFSUtilsStaticFilesDir, EFSUtilsConfigLink, EFSUtilsStateDir string
	// EFSUtilsWatchdogPath is the watchdog the driver supervises.
	EFSUtilsWatchdogPath string
	// PublishRecordsDir keeps one record per published target (a hostPath, so records outlive the pod).
	PublishRecordsDir string

	fs *pflag.FlagSet
}

// nodeFlagNames are the flags that only the node service reads; with --mode=controller they are ignored with a
// warning (a manifest copied from upstream, where one binary serves both, may pass them).
// --efs-utils-static-files-path is not among them: the driver image's ENTRYPOINT passes it (as OpenShift's image
// always has), so the controller, which runs the same image, must accept and ignore it.
var nodeFlagNames = []string{
	"max-inflight-mount-calls-opt-in", "max-inflight-mount-calls", "volume-attach-limit-opt-in", "volume-attach-limit",
	"force-unmount-after-timeout", "unmount-timeout", "vol-metrics-opt-in", "vol-metrics-refresh-period",
	"vol-metrics-fs-rate-limit", "efs-utils-conf-overrides", "efs-cloudwatch-log-enabled", "efs-utils-config-dir-path",
	"efs-utils-config-legacy-dir-path", "efs-utils-config-link-path", "efs-utils-state-dir",
	"efs-utils-watchdog-path", "publish-records-dir",
}

// AddFlags binds the node flags onto fs.
func (o *NodeOptions) AddFlags(fs *pflag.FlagSet) {
	o.fs = fs
	fs.BoolVar(&o.MaxInflightMountCallsOptIn, "max-inflight-mount-calls-opt-in", false, "Cap concurrent NodePublishVolume calls at --max-inflight-mount-calls (node).")
	fs.IntVar(&o.MaxInflightMountCalls, "max-inflight-mount-calls", -1, "Most NodePublishVolume calls at once with --max-inflight-mount-calls-opt-in; more are answered Aborted and retried by kubelet. Ignored without the opt-in (node).")
	fs.BoolVar(&o.VolumeAttachLimitOptIn, "volume-attach-limit-opt-in", false, "Report --volume-attach-limit as the node's volume limit (node).")
	fs.Int64Var(&o.VolumeAttachLimit, "volume-attach-limit", -1, "Most EFS volumes the scheduler places on a node (NodeGetInfo MaxVolumesPerNode) with --volume-attach-limit-opt-in. Ignored without the opt-in (node).")
	fs.BoolVar(&o.ForceUnmountAfterTimeout, "force-unmount-after-timeout", false, "Run umount -f when an unmount has not finished after --unmount-timeout (node).")
	fs.DurationVar(&o.UnmountTimeout, "unmount-timeout", 30*time.Second, "How long a plain unmount may take before --force-unmount-after-timeout forces it; 0 or less forces at once (node).")
	fs.BoolVar(&o.VolMetricsOptIn, "vol-metrics-opt-in", false, "Serve NodeGetVolumeStats: walk each volume in the background to measure bytes and inodes used (node).")
	fs.Float64Var(&o.VolMetricsRefreshPeriod, "vol-metrics-refresh-period", 240, "Minutes a volume's measured usage is served before it is walked again (node).")
	fs.IntVar(&o.VolMetricsFsRateLimit, "vol-metrics-fs-rate-limit", 5, "Most usage walks running at once per file system (node).")
	fs.StringVar(&o.EFSUtilsConfOverrides, "efs-utils-conf-overrides", "", "Settings of efs-utils.conf to override: section:key=value[,section:key=value], e.g. mount:port_range_upper_bound=21449 (node).")
	fs.BoolVar(&o.EFSCloudWatchLogEnabled, "efs-cloudwatch-log-enabled", false, "Set [cloudwatch-log] enabled in efs-utils.conf (node).")
	fs.StringVar(&o.EFSUtilsConfigDir, "efs-utils-config-dir-path", "/var/amazon/efs", "efs-utils config directory (hostPath) used unless the legacy one holds efs-utils.conf (node).")
	fs.StringVar(&o.EFSUtilsLegacyConfigDir, "efs-utils-config-legacy-dir-path", "/etc/amazon/efs-legacy", "The host's old /etc/amazon/efs; used when it already holds efs-utils.conf (node).")
	fs.StringVar(&o.EFSUtilsStaticFilesDir, "efs-utils-static-files-path", "/etc/amazon/efs-static-files/", "The image's efs-utils files (CA bundle) copied into the config directory (node; accepted and ignored by the controller).")
	fs.StringVar(&o.EFSUtilsConfigLink, "efs-utils-config-link-path", "/etc/amazon/efs", "Where efs-utils reads its configuration; made a symbolic link to the chosen config directory (node).")
	fs.StringVar(&o.EFSUtilsStateDir, "efs-utils-state-dir", "/var/run/efs", "efs-utils state directory (hostPath): relay state files and configs (node).")
	fs.StringVar(&o.EFSUtilsWatchdogPath, "efs-utils-watchdog-path", efsutils.DefaultWatchdogPath, "The amazon-efs-mount-watchdog the driver runs and restarts (node).")
	fs.StringVar(&o.PublishRecordsDir, "publish-records-dir", "/var/lib/kubelet/plugins/efs.csi.aws.com/published", "Directory (hostPath) of the records that make NodePublishVolume idempotent across restarts (node).")
}

// Validate checks the node flags; controllerOnly says whether the process runs the controller only, where node
// flags are not read (see controllerWarnings).
func (o *NodeOptions) Validate(controllerOnly bool) error {
	if controllerOnly {
		return nil
	}
	if o.MaxInflightMountCallsOptIn && o.MaxInflightMountCalls <= 0 {
		return fmt.Errorf("--max-inflight-mount-calls-opt-in needs --max-inflight-mount-calls > 0, got %d", o.MaxInflightMountCalls)
	}
	// Without their opt-in flags, --max-inflight-mount-calls and --volume-attach-limit take any value and have no
	// effect, and --unmount-timeout takes any duration (0 or less: umount -f at once when forcing), as upstream
	// v3.4.1 (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd pkg/driver/options.go Validate refuses only an opt-in
	// without a positive value).
	if o.VolumeAttachLimitOptIn && o.VolumeAttachLimit <= 0 {
		return fmt.Errorf("--volume-attach-limit-opt-in needs --volume-attach-limit > 0, got %d", o.VolumeAttachLimit)
	}
	if o.VolMetricsRefreshPeriod <= 0 {
		return fmt.Errorf("--vol-metrics-refresh-period %s: want a positive number of minutes such as 240", strconv.FormatFloat(o.VolMetricsRefreshPeriod, 'g', -1, 64))
	}
	if o.VolMetricsFsRateLimit <= 0 {
		return fmt.Errorf("--vol-metrics-fs-rate-limit %d: want a positive number of walks per file system", o.VolMetricsFsRateLimit)
	}
	if _, err := efsutils.ParseOverrides(o.EFSUtilsConfOverrides); err != nil {
		return fmt.Errorf("--efs-utils-conf-overrides: %w", err)
	}
	for _, p := range []struct{ flag, value string }{
		{"efs-utils-config-dir-path", o.EFSUtilsConfigDir}, {"efs-utils-config-legacy-dir-path", o.EFSUtilsLegacyConfigDir},
		{"efs-utils-static-files-path", o.EFSUtilsStaticFilesDir}, {"efs-utils-config-link-path", o.EFSUtilsConfigLink},
		{"efs-utils-state-dir", o.EFSUtilsStateDir}, {"efs-utils-watchdog-path", o.EFSUtilsWatchdogPath},
		{"publish-records-dir", o.PublishRecordsDir},
	} {
		if !filepath.IsAbs(p.value) {
			return fmt.Errorf("--%s %q: want an absolute path", p.flag, p.value)
		}
	}
	return nil
}

// controllerWarnings names the node flags given to a controller-only process, which ignores them.
func (o *NodeOptions) controllerWarnings() []string {
	var w []string
	for _, name := range nodeFlagNames {
		if o.fs != nil && o.fs.Changed(name) {
			w = append(w, fmt.Sprintf("--%s is a node flag: ignored with --mode=controller", name))
		}
	}
	return w
}

// inflightCap is the effective cap on concurrent publishes (0: none): --max-inflight-mount-calls takes effect only
// with --max-inflight-mount-calls-opt-in, as upstream (getMaxInflightMountCalls).
func (o *NodeOptions) inflightCap() int {
	if o.MaxInflightMountCallsOptIn && o.MaxInflightMountCalls > 0 {
		return o.MaxInflightMountCalls
	}
	return 0
}

// volumeLimit is the effective MaxVolumesPerNode (0: not reported): --volume-attach-limit takes effect only with
// --volume-attach-limit-opt-in, as upstream (getVolumeAttachLimit).
func (o *NodeOptions) volumeLimit() int64 {
	if o.VolumeAttachLimitOptIn && o.VolumeAttachLimit > 0 {
		return o.VolumeAttachLimit
	}
	return 0
}
