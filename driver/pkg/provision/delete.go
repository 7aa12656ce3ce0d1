package provision

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/rootdir"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrWrongFileSystem is wrapped when a volume handle names an access point of another file system.
var ErrWrongFileSystem = errors.New("access point belongs to another file system")

// RootDirDeleter removes an access point's root directory (--delete-access-point-root-dir).
type RootDirDeleter interface {
	Delete(ctx context.Context, t rootdir.Target) error
}

// DeleteRequest is one DeleteVolume.
type DeleteRequest struct {
	Handle  volume.Handle
	Account Account
	// RootDir, when non-nil, deletes the access point's root directory first; MountOptions are its mount options.
	RootDir      RootDirDeleter
	MountOptions []string
}

// Delete deletes a volume's access point. A handle without an access point (static volume) and an access point
// already gone are success. With RootDir, the access point must belong to the handle's file system, and it is
// kept when its directory could not be deleted, so that a retry can finish the job.
func (p *Provisioner) Delete(ctx context.Context, c EFS, req DeleteRequest) error {
	h := req.Handle
	if h.AccessPointID == "" {
		klog.V(4).InfoS("Volume has no access point; nothing to delete", "volumeID", h.String())
		return nil
	}
	key := req.Account.Key + "|" + h.FileSystemID
	var (
		forget bool
		gid    uint32
	)
	if req.RootDir != nil {
		ap, err := c.DescribeAccessPoint(ctx, h.AccessPointID)
		if errors.Is(err, cloud.ErrAccessPointNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if ap.FileSystemID != h.FileSystemID {
			return fmt.Errorf("%w: volume %s names file system %s, access point %s is on %s; refusing to delete anything",
				ErrWrongFileSystem, h.String(), h.FileSystemID, ap.ID, ap.FileSystemID)
		}
		if err := req.RootDir.Delete(ctx, rootdir.Target{FileSystemID: h.FileSystemID, AccessPointID: ap.ID,
			RootDir: ap.RootDir, MountOptions: req.MountOptions}); err != nil {
			return fmt.Errorf("access point %s kept: %w", ap.ID, err)
		}
		forget = ap.HasPosixUser
		gid = ap.GID
	}
	err := c.DeleteAccessPoint(ctx, h.AccessPointID)
	if err != nil && !errors.Is(err, cloud.ErrAccessPointNotFound) {
		return err
	}
	if forget {
		p.cfg.GIDs.Forget(key, gid)
	}
	klog.V(2).InfoS("Deleted access point", "accessPointID", h.AccessPointID, "fileSystemID", h.FileSystemID)
	return nil
}
