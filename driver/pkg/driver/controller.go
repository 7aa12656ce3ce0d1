package driver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// TopologyZoneKey is the topology key of One Zone volumes (what the node reports in NodeGetInfo).
const TopologyZoneKey = "topology.kubernetes.io/zone"

// errNoResolver is wrapped when a StorageClass uses a file system reference the controller cannot read.
var errNoResolver = errors.New("file system ID references are not available")

// Clouds hands out AWS clients: the driver's own and one per cross-account role.
type Clouds interface {
	Own() *cloud.Cloud
	ForRole(roleARN, externalID string) *cloud.Cloud
	Ready(ctx context.Context) error
}

// FileSystemIDResolver reads the file system ID a fileSystemIdConfigRef or fileSystemIdSecretRef points at.
type FileSystemIDResolver interface {
	Resolve(ctx context.Context, ref scparams.ObjectRef, secret bool) (string, error)
}

// ControllerConfig configures the controller service.
type ControllerConfig struct {
	// Provisioner creates and deletes access points; required.
	Provisioner *provision.Provisioner
	// RootDir deletes access point root directories (--delete-access-point-root-dir); nil leaves data in place.
	RootDir provision.RootDirDeleter
	// Resolver reads fileSystemIdConfigRef/SecretRef; nil refuses them.
	Resolver FileSystemIDResolver
	// Events posts warnings on claims (unknown StorageClass parameters); nil only logs them.
	Events ClaimWarner
}

// ClaimWarner posts a Warning Event on a PersistentVolumeClaim.
type ClaimWarner interface {
	WarnClaim(ctx context.Context, namespace, name, reason, message string) error
}

// Controller is the CSI controller service.
type Controller struct {
	csi.UnimplementedControllerServer
	cfg      ControllerConfig
	clouds   atomic.Pointer[cloudsBox]
	start    startup
	zoneID   atomic.Pointer[string]
	inflight *inFlight
	warned   warnedOnce
}

type cloudsBox struct{ Clouds }

// NewController returns a controller whose requests wait, each within its own deadline, until SetClouds is
// called, and fail at once naming the cause while SetInitError reports a failed attempt.
func NewController(cfg ControllerConfig) *Controller {
	return &Controller{cfg: cfg, inflight: newInFlight(), start: newStartup()}
}

// SetZoneID records the controller's availability zone ID, used to pick the mount target for root-directory
// deletion across accounts.
func (c *Controller) SetZoneID(id string) { c.zoneID.Store(&id) }

func (c *Controller) zone() string {
	if z := c.zoneID.Load(); z != nil {
		return *z
	}
	return ""
}

// SetClouds installs the AWS clients once metadata and credentials are set up, and releases the requests waiting
// for them.
func (c *Controller) SetClouds(cl Clouds) {
	c.clouds.Store(&cloudsBox{cl})
	c.start.set(nil, true)
}

// SetInitError records that an attempt to initialise the AWS clients failed (err names what failed); until the
// next attempt succeeds, requests fail at once with Unavailable and that cause instead of waiting.
func (c *Controller) SetInitError(err error) { c.start.set(err, false) }

// Ready reports whether the controller can serve: AWS clients installed and credentials obtainable. It never waits.
func (c *Controller) Ready(ctx context.Context) error {
	box := c.clouds.Load()
	if box == nil {
		if err := c.start.failure(); err != nil {
			return fmt.Errorf("%w: %w", errInitFailed, err)
		}
		return errNotReady
	}
	return box.Ready(ctx)
}

// waitClouds returns the AWS clients, waiting for the controller's start-up within ctx: Probe answers ready as
// soon as the socket serves (for the node plugin's sake, see Identity.Probe), so csi-provisioner's first requests
// may arrive before the clients exist, and they must not fail for that alone.
func (c *Controller) waitClouds(ctx context.Context) (Clouds, error) {
	for {
		if box := c.clouds.Load(); box != nil {
			return box.Clouds, nil
		}
		changed, err := c.start.wait()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errInitFailed, err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: the request's deadline passed while waiting for it: %w", errNotReady, ctx.Err())
		}
	}
}

func (c *Controller) cloudFor(ctx context.Context, ca scparams.CrossAccount) (*cloud.Cloud, *cloud.Cloud, error) {
	box, err := c.waitClouds(ctx)
	if err != nil {
		return nil, nil, err
	}
	if ca.RoleARN == "" {
		return box.Own(), box.Own(), nil
	}
	return box.ForRole(ca.RoleARN, ca.ExternalID), box.Own(), nil
}

// CreateVolume creates an access point for a volume, or returns the one a previous call created.
func (c *Controller) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	resp, err := c.createVolume(ctx, req)
	return resp, toStatus(redactSecrets(err, req.GetSecrets()))
}

func (c *Controller) createVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, fmt.Errorf("%w: volume name is missing", errInvalidRequest)
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	params, err := scparams.ParseParams(req.GetParameters())
	if err != nil {
		return nil, err
	}
	c.warnParams(ctx, params, req.GetParameters())
	ca, err := scparams.ParseSecrets(req.GetSecrets())
	if err != nil {
		return nil, err
	}
	release, err := c.inflight.acquire("create/" + req.GetName())
	if err != nil {
		return nil, err
	}
	defer release()
	efs, own, err := c.cloudFor(ctx, ca)
	if err != nil {
		return nil, err
	}
	fsID, err := c.fileSystemID(ctx, params)
	if err != nil {
		return nil, err
	}
	capacity := req.GetCapacityRange().GetRequiredBytes()
	vol, err := c.cfg.Provisioner.Create(ctx, efs, own, provision.CreateRequest{Name: req.GetName(), FileSystemID: fsID,
		Params: params, Account: provision.AccountOf(ca), CapacityBytes: capacity})
	if err != nil {
		return nil, err
	}
	out := &csi.Volume{VolumeId: vol.Handle.String(), CapacityBytes: capacity, VolumeContext: vol.Context.Attributes()}
	if vol.Zone != "" {
		out.AccessibleTopology = []*csi.Topology{{Segments: map[string]string{TopologyZoneKey: vol.Zone}}}
	}
	return &csi.CreateVolumeResponse{Volume: out}, nil
}

func (c *Controller) fileSystemID(ctx context.Context, p scparams.Params) (string, error) {
	if p.FileSystemID != "" {
		return p.FileSystemID, nil
	}
	ref, secret, param := p.FileSystemIDConfigRef, false, scparams.ParamFileSystemIDConfigRef
	if ref == nil {
		ref, secret, param = p.FileSystemIDSecretRef, true, scparams.ParamFileSystemIDSecretRef
	}
	if c.cfg.Resolver == nil {
		return "", fmt.Errorf("%w: %s needs the controller to read it from the cluster; use %s", errNoResolver, param, scparams.ParamFileSystemID)
	}
	id, err := c.cfg.Resolver.Resolve(ctx, *ref, secret)
	if err != nil {
		return "", fmt.Errorf("%s %s/%s/%s: %w", param, ref.Namespace, ref.Name, ref.Key, err)
	}
	if !volume.ValidFileSystemID(id) {
		shown := fmt.Sprintf("%q", id)
		if secret {
			shown = "a value that" // a Secret's value never reaches an error, event or log
		}
		return "", fmt.Errorf("%w: %s %s/%s/%s holds %s is not a file system ID: want fs-<8 to 40 hex digits>", scparams.ErrInvalidParameter, param,
			ref.Namespace, ref.Name, ref.Key, shown)
	}
	return id, nil
}

// DeleteVolume deletes a volume's access point (and, with --delete-access-point-root-dir, its directory first).
// An ID that does not parse or has no access point is success, as CSI asks for unknown volumes.
func (c *Controller) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	err := c.deleteVolume(ctx, req)
	if err != nil {
		return nil, toStatus(redactSecrets(err, req.GetSecrets()))
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (c *Controller) deleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) error {
	if req.GetVolumeId() == "" {
		return fmt.Errorf("%w: volume ID is missing", errInvalidRequest)
	}
	h, err := volume.ParseHandle(req.GetVolumeId())
	if errors.Is(err, volume.ErrUnsupportedType) {
		// Success would let Kubernetes forget a volume whose access point stays: never report a deletion that did
		// not happen.
		return fmt.Errorf("volume %q not deleted: %w", req.GetVolumeId(), err)
	}
	if err != nil {
		klog.V(2).InfoS("DeleteVolume of an ID that is not an EFS volume handle: nothing to delete", "volumeID", req.GetVolumeId(), "err", err)
		return nil
	}
	ca, err := scparams.ParseSecrets(req.GetSecrets())
	if err != nil {
		return err
	}
	release, err := c.inflight.acquire("delete/" + req.GetVolumeId())
	if err != nil {
		return err
	}
	defer release()
	efs, _, err := c.cloudFor(ctx, ca)
	if err != nil {
		return err
	}
	dr := provision.DeleteRequest{Handle: h, Account: provision.AccountOf(ca)}
	if c.cfg.RootDir != nil && h.AccessPointID != "" {
		dr.RootDir = c.cfg.RootDir
		dr.MountOptions = func(ctx context.Context) ([]string, error) {
			return provision.CleanupMountOptions(ctx, efs, dr.Account, h.FileSystemID, c.zone())
		}
	}
	return c.cfg.Provisioner.Delete(ctx, efs, dr)
}

// ValidateVolumeCapabilities confirms the capabilities of an existing volume.
func (c *Controller) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	resp, err := c.validateVolumeCapabilities(ctx, req)
	return resp, toStatus(redactSecrets(err, req.GetSecrets()))
}

func (c *Controller) validateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, fmt.Errorf("%w: volume ID is missing", errInvalidRequest)
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, fmt.Errorf("%w: volume capabilities are missing", errInvalidRequest)
	}
	h, err := volume.ParseHandle(req.GetVolumeId())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", cloud.ErrAccessPointNotFound, err)
	}
	if h.AccessPointID != "" {
		ca, err := scparams.ParseSecrets(req.GetSecrets())
		if err != nil {
			return nil, err
		}
		efs, _, err := c.cloudFor(ctx, ca)
		if err != nil {
			return nil, err
		}
		ap, err := efs.DescribeAccessPoint(ctx, h.AccessPointID)
		if err != nil {
			return nil, err
		}
		if ap.FileSystemID != h.FileSystemID {
			return nil, fmt.Errorf("%w: access point %s is on %s, not %s", cloud.ErrAccessPointNotFound, ap.ID, ap.FileSystemID, h.FileSystemID)
		}
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(),
	}}, nil
}

// ControllerGetCapabilities advertises CREATE_DELETE_VOLUME and SINGLE_NODE_MULTI_WRITER (ReadWriteOncePod).
func (c *Controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, t := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
	} {
		caps = append(caps, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}
