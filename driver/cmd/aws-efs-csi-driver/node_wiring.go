package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/driver"
	"github.com/openshift/aws-efs-csi/driver/pkg/efsutils"
	"github.com/openshift/aws-efs-csi/driver/pkg/health"
	"github.com/openshift/aws-efs-csi/driver/pkg/mount"
	"github.com/openshift/aws-efs-csi/driver/pkg/nodeinfo"
	"github.com/openshift/aws-efs-csi/driver/pkg/taint"
	"github.com/openshift/aws-efs-csi/driver/pkg/volstats"
)

// nodeEnv is what the node service reads from its environment, read once at start-up.
type nodeEnv struct {
	// nodeName is CSI_NODE_NAME.
	nodeName string
	// disableTaintWatcher is DISABLE_TAINT_WATCHER set to anything.
	disableTaintWatcher bool
	// fips is FIPS_ENABLED=true.
	fips bool
	// portRangeUpperBound is PORT_RANGE_UPPER_BOUND ("" for the default).
	portRangeUpperBound string
}

func readNodeEnv(getenv func(string) string) nodeEnv {
	return nodeEnv{
		nodeName:            getenv("CSI_NODE_NAME"),
		disableTaintWatcher: getenv("DISABLE_TAINT_WATCHER") != "",
		fips:                getenv("FIPS_ENABLED") == "true",
		portRangeUpperBound: getenv("PORT_RANGE_UPPER_BOUND"),
	}
}

// efsClientSource is [client-info] source in efs-utils.conf (upstream's build-time default).
const efsClientSource = "k8s"

// startNode prepares efs-utils, builds the node service and starts the node-only machinery (watchdog, reaper,
// identity resolution, taint removal, volume stats) in g. It returns the service and the health checks of its
// dependencies.
func startNode(ctx context.Context, g *errgroup.Group, opts *Options, e env) (*driver.Node, []health.Check, error) {
	o := &opts.Node
	watchdog, err := startEFSUtils(ctx, g, opts, e)
	if err != nil {
		return nil, nil, err
	}
	recs, err := mount.NewRecords(o.PublishRecordsDir)
	if err != nil {
		return nil, nil, err
	}
	mcfg := mount.Config{OS: mount.NewOS(), Records: recs, StateDir: o.EFSUtilsStateDir}
	if o.ForceUnmountAfterTimeout {
		mcfg.ForceUnmount, mcfg.ForceUnmountAfter = true, o.UnmountTimeout
	}
	ncfg := driver.NodeConfig{Publisher: mount.New(mcfg), MaxVolumesPerNode: o.volumeLimit(), MaxInflightMounts: o.inflightCap()}
	if o.VolMetricsOptIn {
		ncfg.Stats = volstats.New(volstats.Config{PerFileSystem: o.VolMetricsFsRateLimit,
			RefreshPeriod: time.Duration(o.VolMetricsRefreshPeriod * float64(time.Minute))})
		g.Go(func() error { <-ctx.Done(); ncfg.Stats.Close(); return nil })
	}
	node := driver.NewNode(ncfg)
	kube := kubeClient()
	g.Go(func() error { resolveNode(ctx, opts, e, node, kube); return nil })
	ready := func(ctx context.Context) error {
		if err := node.Ready(ctx); err != nil {
			return err
		}
		return watchdog.Healthy(ctx)
	}
	switch {
	case e.node.disableTaintWatcher:
		klog.V(2).InfoS("Start-up taint removal disabled by DISABLE_TAINT_WATCHER")
	case e.node.nodeName == "" || kube == nil:
		klog.V(2).InfoS("Start-up taint removal skipped: needs CSI_NODE_NAME and an in-cluster Kubernetes client")
	default:
		remover := &taint.Remover{Nodes: kube.CoreV1().Nodes(), NodeName: e.node.nodeName, Ready: ready}
		g.Go(func() error { _ = remover.Run(ctx); return nil })
	}
	return node, []health.Check{{Name: "node_identity", Fn: node.Ready}, {Name: "efs_utils_watchdog", Fn: watchdog.Healthy}}, nil
}

// startEFSUtils prepares what mount.efs needs (efs-utils.conf rendered into the config directory, the CA bundle
// copied from the image, /etc/amazon/efs linked to it, the state directory) and starts the watchdog, which stops the
// stunnel relays of unmounted file systems, and the zombie reaper in g. The node needs it for every publish; a
// controller with --delete-access-point-root-dir needs it for its temporary tls,iam mounts.
func startEFSUtils(ctx context.Context, g *errgroup.Group, opts *Options, e env) (*efsutils.Supervisor, error) {
	o := &opts.Node
	conf, err := renderConf(opts, e)
	if err != nil {
		return nil, err
	}
	dirs := efsutils.Dirs{ConfigDir: o.EFSUtilsConfigDir, LegacyDir: o.EFSUtilsLegacyConfigDir, LinkPath: o.EFSUtilsConfigLink,
		StaticDir: o.EFSUtilsStaticFilesDir, StateDir: o.EFSUtilsStateDir}
	if _, err := efsutils.Setup(dirs, conf); err != nil {
		return nil, err
	}
	watchdog := &efsutils.Supervisor{Path: o.EFSUtilsWatchdogPath}
	g.Go(func() error { watchdog.Run(ctx); return nil })
	reaper := &efsutils.Reaper{Subreaper: true}
	g.Go(func() error { reaper.Run(ctx); return nil })
	return watchdog, nil
}

func renderConf(opts *Options, e env) ([]byte, error) {
	overrides, err := efsutils.ParseOverrides(opts.Node.EFSUtilsConfOverrides)
	if err != nil {
		return nil, fmt.Errorf("--efs-utils-conf-overrides: %w", err)
	}
	upper := 0
	if e.node.portRangeUpperBound != "" {
		if upper, err = strconv.Atoi(e.node.portRangeUpperBound); err != nil {
			return nil, fmt.Errorf("PORT_RANGE_UPPER_BOUND %q: want an integer of at least %d", e.node.portRangeUpperBound, efsutils.DefaultPortRangeUpperBound)
		}
	}
	region := opts.Region
	if region == "" {
		region = e.region
	}
	return efsutils.Render(efsutils.ConfOptions{Region: region, FIPS: e.node.fips, PortRangeUpperBound: upper, Debug: opts.DebugLogs,
		ClientSource: efsClientSource, CloudWatchLogs: opts.Node.EFSCloudWatchLogEnabled, Overrides: overrides})
}

// resolveNode finds the node's identity (IMDS, else the Node object), retrying with backoff until it works or ctx
// ends; NodeGetInfo answers Unavailable, and the node_identity dependency is reported unhealthy, until then.
func resolveNode(ctx context.Context, opts *Options, e env, node *driver.Node, kube *coreV1) {
	retryUntilDone(ctx, "Identifying the node", func() error {
		in := nodeinfo.Input{NodeName: e.node.nodeName, Region: opts.Region, Zone: opts.AvailabilityZone}
		if kube != nil {
			in.Nodes = kube.CoreV1().Nodes()
		}
		if client, err := cloud.NewIMDSClient(ctx, ""); err == nil {
			in.IMDS = client
		}
		info, err := nodeinfo.Resolve(ctx, in)
		if err != nil {
			return err
		}
		node.SetInfo(info)
		klog.InfoS("Node identified", "instanceID", info.InstanceID, "zone", info.Zone, "zoneID", info.ZoneID, "source", info.Source)
		return nil
	})
}
