package provision

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrConflict is wrapped when an access point with the request's client token exists but does not fit the request.
var ErrConflict = errors.New("existing access point does not match the request")

// Tags the driver puts on access points created with enableTagging.
const (
	// ClusterTagKey is on every tagged access point (the upstream IAM policy example conditions on it).
	ClusterTagKey = "efs.csi.aws.com/cluster"
	// CapacityTagKey records the requested capacity, so that a CreateVolume repeated with another capacity is
	// refused as CSI requires.
	CapacityTagKey = "efs.csi.aws.com/requested-bytes"
)

// EFS lists the EFS calls the provisioner makes.
type EFS interface {
	Lister
	CreateAccessPoint(ctx context.Context, in cloud.CreateAccessPointInput) (*cloud.AccessPoint, error)
	DescribeAccessPoint(ctx context.Context, id string) (*cloud.AccessPoint, error)
	DeleteAccessPoint(ctx context.Context, id string) error
	DescribeFileSystem(ctx context.Context, id string) (*cloud.FileSystem, error)
	DescribeMountTargets(ctx context.Context, fileSystemID string) ([]cloud.MountTarget, error)
}

// Zones lists the availability zones of the cluster's own account (names there and IDs).
type Zones interface {
	AvailabilityZones(ctx context.Context) ([]cloud.Zone, error)
}

// Account says whose file system a request is for.
type Account struct {
	// Key identifies the identity ("" for the driver's own; the role ARN for a cross-account one).
	Key string
	// CrossAccount is true when the file system belongs to another account (awsRoleArn in the secret).
	CrossAccount bool
	// DNSByAZID asks the node to resolve the mount target by AZ-ID DNS name (secret crossaccount=true).
	DNSByAZID bool
}

// CreateRequest is one CreateVolume, parameters parsed and the file system ID resolved.
type CreateRequest struct {
	Name         string
	FileSystemID string
	Params       Params
	Account      Account
	// CapacityBytes is the requested capacity (EFS ignores it; recorded in a tag when tagging).
	CapacityBytes int64
}

// Volume is a provisioned volume.
type Volume struct {
	Handle  volume.Handle
	Context volume.Context
	// Zone is the availability zone name (in the cluster's account) the volume is reachable from only, for a
	// One Zone file system with enforceZoneAffinity; "" otherwise.
	Zone        string
	AccessPoint cloud.AccessPoint
}

// Config configures a Provisioner.
type Config struct {
	// Tags are added to every access point created with enableTagging (--tags).
	Tags map[string]string
	// GIDs allocates GIDs; required.
	GIDs *GIDAllocator
}

// Provisioner creates and deletes the access points behind volumes.
type Provisioner struct {
	cfg   Config
	mu    sync.Mutex
	fs    map[string]cloud.FileSystem // One Zone placement never changes: cached per account+FS
	zones []cloud.Zone                // the cluster account's zones, cached
}

// New returns a Provisioner.
func New(cfg Config) *Provisioner {
	return &Provisioner{cfg: cfg, fs: map[string]cloud.FileSystem{}}
}

// Create creates (or, for a retried or reused request, finds) the access point of a volume. Every lookup that can
// fail runs before CreateAccessPoint, so a failed Create leaves no access point behind.
func (p *Provisioner) Create(ctx context.Context, c EFS, own Zones, req CreateRequest) (*Volume, error) {
	params := req.Params
	if !params.EnableTagging && len(p.cfg.Tags) > 0 {
		return nil, fmt.Errorf("%w: %s=false conflicts with the driver's --tags: remove one of them", ErrInvalidParameter, ParamEnableTagging)
	}
	rootDir, err := RootDir(params, req.Name)
	if err != nil {
		return nil, err
	}
	v := &Volume{}
	if params.EnforceZoneAffinity {
		if v.Zone, err = p.oneZone(ctx, c, own, req); err != nil {
			return nil, err
		}
	}
	if v.Context, err = p.mountContext(ctx, c, own, req); err != nil {
		return nil, err
	}
	in := cloud.CreateAccessPointInput{FileSystemID: req.FileSystemID, ClientToken: ClientToken(params, req.FileSystemID, req.Name),
		RootDir: rootDir, Permissions: params.DirectoryPerms}
	if params.EnableTagging {
		in.Tags = maps.Clone(p.cfg.Tags)
		if in.Tags == nil {
			in.Tags = map[string]string{}
		}
		in.Tags[ClusterTagKey] = "true"
		if !params.ReuseAccessPoint {
			in.Tags[CapacityTagKey] = strconv.FormatInt(req.CapacityBytes, 10)
		}
	}
	ap, err := p.createAccessPoint(ctx, c, req, in)
	if err != nil {
		return nil, err
	}
	v.AccessPoint = *ap
	v.Handle = volume.Handle{FileSystemID: req.FileSystemID, AccessPointID: ap.ID}
	return v, nil
}

// createAccessPoint allocates the POSIX identity and creates the access point, adopting an existing one with the
// same client token when it fits the request.
func (p *Provisioner) createAccessPoint(ctx context.Context, c EFS, req CreateRequest, in cloud.CreateAccessPointInput) (*cloud.AccessPoint, error) {
	params := req.Params
	var lease *Lease
	if params.UID == nil || params.GID == nil {
		var err error
		lease, err = p.cfg.GIDs.Allocate(ctx, gidKey(req), c, req.FileSystemID, params.GIDRangeStart, params.GIDRangeEnd)
		if err != nil {
			return nil, err
		}
	}
	in.UID, in.GID = identity(params, lease)
	ap, err := c.CreateAccessPoint(ctx, in)
	var exists *cloud.AlreadyExistsError
	switch {
	case err == nil:
		if lease != nil {
			if ap.GID == lease.GID {
				lease.Commit()
			} else {
				lease.Release() // EFS returned an earlier access point with this token
			}
		}
		if err := fits(ap, req); err != nil {
			return nil, err
		}
		klog.V(2).InfoS("Created access point", "accessPointID", ap.ID, "fileSystemID", ap.FileSystemID, "rootDir", ap.RootDir, "gid", ap.GID)
		return ap, nil
	case errors.As(err, &exists):
		if lease != nil {
			lease.Release()
		}
		return p.adopt(ctx, c, req, in.ClientToken, exists.AccessPointID)
	default:
		if lease != nil {
			lease.Release()
		}
		if errors.Is(err, cloud.ErrLimitExceeded) {
			p.cfg.GIDs.Invalidate(gidKey(req))
			return nil, fmt.Errorf("%w: file system %s has reached its access point quota: delete unused volumes, raise the EFS quota, or set the StorageClass parameter %s to another file system: %w",
				ErrExhausted, req.FileSystemID, ParamFileSystemID, err)
		}
		return nil, err
	}
}

// adopt returns the access point that already holds the request's client token (a retried CreateVolume, or a
// reused access point) if it fits the request.
func (p *Provisioner) adopt(ctx context.Context, c EFS, req CreateRequest, token, id string) (*cloud.AccessPoint, error) {
	var ap *cloud.AccessPoint
	if id != "" {
		found, err := c.DescribeAccessPoint(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("describe access point %s holding client token %q: %w", id, token, err)
		}
		ap = found
	} else {
		aps, err := c.ListAccessPoints(ctx, req.FileSystemID)
		if err != nil {
			return nil, fmt.Errorf("find access point with client token %q: %w", token, err)
		}
		for i := range aps {
			if aps[i].ClientToken == token {
				ap = &aps[i]
			}
		}
		if ap == nil {
			return nil, fmt.Errorf("EFS reported client token %q in use on %s but no access point carries it: %w", token, req.FileSystemID, cloud.ErrUnavailable)
		}
	}
	if err := fits(ap, req); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("Using existing access point with the same client token", "accessPointID", ap.ID, "fileSystemID", ap.FileSystemID)
	return ap, nil
}

// fits checks that an access point found by client token can serve the request.
func fits(ap *cloud.AccessPoint, req CreateRequest) error {
	p := req.Params
	base := p.BasePath
	if base == "" {
		base = "/"
	}
	switch {
	case ap.FileSystemID != req.FileSystemID:
		return fmt.Errorf("%w: access point %s is on %s, not %s", ErrConflict, ap.ID, ap.FileSystemID, req.FileSystemID)
	case ap.RootDir == "/" || !(base == "/" || strings.HasPrefix(ap.RootDir, base+"/")):
		return fmt.Errorf("%w: access point %s root %q is not under %s %q", ErrConflict, ap.ID, ap.RootDir, ParamBasePath, base)
	case !ap.HasPosixUser:
		return fmt.Errorf("%w: access point %s has no POSIX user", ErrConflict, ap.ID)
	case p.UID != nil && ap.UID != *p.UID:
		return fmt.Errorf("%w: access point %s has uid %d, %s is %d", ErrConflict, ap.ID, ap.UID, ParamUID, *p.UID)
	case p.GID != nil && ap.GID != *p.GID:
		return fmt.Errorf("%w: access point %s has gid %d, %s is %d", ErrConflict, ap.ID, ap.GID, ParamGID, *p.GID)
	case !p.ReuseAccessPoint && ap.Tags[CapacityTagKey] != "" && ap.Tags[CapacityTagKey] != strconv.FormatInt(req.CapacityBytes, 10):
		return fmt.Errorf("%w: volume %s exists with capacity %s bytes, requested %d", ErrConflict, req.Name, ap.Tags[CapacityTagKey], req.CapacityBytes)
	case p.GID == nil && (ap.GID < p.GIDRangeStart || ap.GID > p.GIDRangeEnd):
		return fmt.Errorf("%w: access point %s has gid %d outside [%s, %s] = [%d, %d]", ErrConflict, ap.ID, ap.GID,
			ParamGIDRangeStart, ParamGIDRangeEnd, p.GIDRangeStart, p.GIDRangeEnd)
	}
	return nil
}

// identity is upstream's rule: fixed uid/gid win; an unset one takes the allocated GID.
func identity(p Params, lease *Lease) (uid, gid uint32) {
	if p.UID != nil {
		uid = *p.UID
	} else {
		uid = lease.GID
	}
	if p.GID != nil {
		gid = *p.GID
	} else {
		gid = lease.GID
	}
	return uid, gid
}

func gidKey(req CreateRequest) string { return req.Account.Key + "|" + req.FileSystemID }
