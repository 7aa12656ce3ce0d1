package driver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/mount"
	"github.com/openshift/aws-efs-csi/driver/pkg/nodeinfo"
	"github.com/openshift/aws-efs-csi/driver/pkg/volstats"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

var (
	// errTooManyMounts is returned beyond --max-inflight-mount-calls (Aborted: kubelet retries).
	errTooManyMounts = errors.New("too many mounts in progress")
	// errNodeUnknown is returned while the node's identity is not resolved (Unavailable).
	errNodeUnknown = errors.New("node identity (instance ID, zone) is not known yet")
	// errPathNotFound is returned for a volume path that does not exist (NotFound).
	errPathNotFound = errors.New("volume path not found")
	// errStatsOff is returned when volume statistics are not enabled (Unimplemented).
	errStatsOff = errors.New("volume statistics are off: start the driver with --vol-metrics-opt-in")
)

// Publisher mounts and unmounts volumes at target paths; *mount.Mounter is the production one.
type Publisher interface {
	Publish(ctx context.Context, volumeID, target string, spec mount.Spec, singleWriter bool) error
	Unpublish(ctx context.Context, volumeID, target string) error
}

var _ Publisher = (*mount.Mounter)(nil)

// NodeConfig configures the node service.
type NodeConfig struct {
	Publisher Publisher
	// MaxVolumesPerNode is reported in NodeGetInfo when > 0 (--volume-attach-limit).
	MaxVolumesPerNode int64
	// MaxInflightMounts caps concurrent NodePublishVolume calls when > 0 (--max-inflight-mount-calls).
	MaxInflightMounts int
	// Stats serves NodeGetVolumeStats when set (--vol-metrics-opt-in).
	Stats *volstats.Statter
}

// Node is the CSI node service.
type Node struct {
	csi.UnimplementedNodeServer
	cfg      NodeConfig
	info     atomic.Pointer[nodeinfo.Info]
	inflight *inFlight
	mounts   chan struct{}
}

// NewNode returns a node service; it answers NodeGetInfo with Unavailable until SetInfo is called.
func NewNode(cfg NodeConfig) *Node {
	n := &Node{cfg: cfg, inflight: newInFlight()}
	if cfg.MaxInflightMounts > 0 {
		n.mounts = make(chan struct{}, cfg.MaxInflightMounts)
	}
	return n
}

// SetInfo records the node's identity once metadata is resolved.
func (n *Node) SetInfo(info nodeinfo.Info) { n.info.Store(&info) }

// Ready reports whether the node knows its identity.
func (n *Node) Ready(context.Context) error {
	if n.info.Load() == nil {
		return errNodeUnknown
	}
	return nil
}

// NodePublishVolume mounts the volume at the target path; see package mount for the rules.
func (n *Node) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	return &csi.NodePublishVolumeResponse{}, toStatus(n.publish(ctx, req))
}

func (n *Node) publish(ctx context.Context, req *csi.NodePublishVolumeRequest) error {
	spec, singleWriter, err := n.composePublish(req)
	if err != nil {
		return err
	}
	if n.mounts != nil {
		select {
		case n.mounts <- struct{}{}:
			defer func() { <-n.mounts }()
		default:
			return fmt.Errorf("%w: %d running (--max-inflight-mount-calls); retry later", errTooManyMounts, cap(n.mounts))
		}
	}
	release, err := n.inflight.acquire("target/" + req.GetTargetPath())
	if err != nil {
		return err
	}
	defer release()
	return n.cfg.Publisher.Publish(ctx, req.GetVolumeId(), req.GetTargetPath(), spec, singleWriter)
}

// composePublish validates a publish request and composes its mount; every error names the bad field.
func (n *Node) composePublish(req *csi.NodePublishVolumeRequest) (mount.Spec, bool, error) {
	if req.GetVolumeId() == "" {
		return mount.Spec{}, false, fmt.Errorf("%w: volume ID is missing", errInvalidRequest)
	}
	if err := checkTarget(req.GetTargetPath()); err != nil {
		return mount.Spec{}, false, err
	}
	c := req.GetVolumeCapability()
	if c == nil {
		return mount.Spec{}, false, fmt.Errorf("%w: volume capability is missing: want a mount capability", errInvalidRequest)
	}
	if err := checkCapabilities([]*csi.VolumeCapability{c}); err != nil {
		return mount.Spec{}, false, err
	}
	h, err := volume.ParseHandle(req.GetVolumeId())
	if err != nil {
		return mount.Spec{}, false, err
	}
	vc, err := volume.ParseContext(req.GetVolumeContext())
	if err != nil {
		return mount.Spec{}, false, err
	}
	var where mount.Node
	if info := n.info.Load(); info != nil {
		where = mount.Node{Zone: info.Zone, ZoneID: info.ZoneID}
	}
	mode := c.GetAccessMode().GetMode()
	readOnly := req.GetReadonly() || mode == csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY ||
		mode == csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY
	spec, err := mount.Compose(mount.Request{Handle: h, Context: vc, MountFlags: c.GetMount().GetMountFlags(), ReadOnly: readOnly, Node: where})
	return spec, mode == csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER, err
}

func checkTarget(target string) error {
	if target == "" {
		return fmt.Errorf("%w: target path is missing", errInvalidRequest)
	}
	if !filepath.IsAbs(target) {
		return fmt.Errorf("%w: target path %q: want an absolute path", errInvalidRequest, target)
	}
	return nil
}

// NodeUnpublishVolume unmounts the target path and removes it; a target that is not mounted (or missing) is OK.
func (n *Node) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	return &csi.NodeUnpublishVolumeResponse{}, toStatus(n.unpublish(ctx, req))
}

func (n *Node) unpublish(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) error {
	if req.GetVolumeId() == "" {
		return fmt.Errorf("%w: volume ID is missing", errInvalidRequest)
	}
	if err := checkTarget(req.GetTargetPath()); err != nil {
		return err
	}
	release, err := n.inflight.acquire("target/" + req.GetTargetPath())
	if err != nil {
		return err
	}
	defer release()
	if err := n.cfg.Publisher.Unpublish(ctx, req.GetVolumeId(), req.GetTargetPath()); err != nil {
		return err
	}
	if n.cfg.Stats != nil {
		n.cfg.Stats.Forget(req.GetVolumeId(), req.GetTargetPath())
	}
	return nil
}

// NodeGetCapabilities advertises single-node-multi-writer (so that ReadWriteOncePod works) and, when enabled,
// volume statistics.
func (n *Node) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	rpc := func(t csi.NodeServiceCapability_RPC_Type) *csi.NodeServiceCapability {
		return &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}}
	}
	caps := []*csi.NodeServiceCapability{rpc(csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER)}
	if n.cfg.Stats != nil {
		caps = append(caps, rpc(csi.NodeServiceCapability_RPC_GET_VOLUME_STATS))
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

// NodeGetInfo reports the instance ID, the volume limit and the zone.
func (n *Node) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	info := n.info.Load()
	if info == nil {
		return nil, toStatus(errNodeUnknown)
	}
	resp := &csi.NodeGetInfoResponse{NodeId: info.InstanceID, MaxVolumesPerNode: n.cfg.MaxVolumesPerNode}
	if info.Zone != "" {
		resp.AccessibleTopology = &csi.Topology{Segments: map[string]string{TopologyZoneKey: info.Zone}}
	}
	return resp, nil
}

// NodeGetVolumeStats returns the cached usage of a volume (UNKNOWN until the first background walk finished).
func (n *Node) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	resp, err := n.volumeStats(req)
	return resp, toStatus(err)
}

func (n *Node) volumeStats(req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if n.cfg.Stats == nil {
		return nil, errStatsOff
	}
	if req.GetVolumeId() == "" {
		return nil, fmt.Errorf("%w: volume ID is missing", errInvalidRequest)
	}
	if req.GetVolumePath() == "" {
		return nil, fmt.Errorf("%w: volume path is missing", errInvalidRequest)
	}
	h, err := volume.ParseHandle(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(req.GetVolumePath()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s (volume %s)", errPathNotFound, req.GetVolumePath(), req.GetVolumeId())
		}
		return nil, fmt.Errorf("stat volume path %s: %w", req.GetVolumePath(), err)
	}
	u, ok := n.cfg.Stats.Get(req.GetVolumeId(), h.FileSystemID, req.GetVolumePath())
	if !ok {
		klog.V(4).InfoS("Volume usage not measured yet", "volumeID", req.GetVolumeId())
		return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{Unit: csi.VolumeUsage_UNKNOWN}}}, nil
	}
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: u.BytesTotal, Available: u.BytesAvailable, Used: u.BytesUsed},
		{Unit: csi.VolumeUsage_INODES, Total: u.InodesTotal, Available: u.InodesFree, Used: u.InodesUsed},
	}}, nil
}
