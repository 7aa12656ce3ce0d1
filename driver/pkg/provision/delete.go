package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/rootdir"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrWrongFileSystem is wrapped when a volume handle names an access point of another file system.
var ErrWrongFileSystem = errors.New("access point belongs to another file system")

// ErrSharedRootDir is wrapped when another access point's root is an access point's root directory or lies inside
// it: deleting the directory would delete another volume's data.
var ErrSharedRootDir = errors.New("root directory is shared with another access point")

// RootDirDeleter removes an access point's root directory (--delete-access-point-root-dir).
type RootDirDeleter interface {
	Delete(ctx context.Context, t rootdir.Target) error
}

// DeleteRequest is one DeleteVolume.
type DeleteRequest struct {
	Handle  volume.Handle
	Account Account
	// RootDir, when non-nil, deletes the access point's root directory first.
	RootDir RootDirDeleter
	// MountOptions works out the options of the file system root mount that deletion needs. It is called only
	// once the access point is known to exist and may be deleted: across accounts it describes mount targets,
	// which fails forever once the file system is gone, and an access point already gone needs no mount.
	MountOptions func(ctx context.Context) ([]string, error)
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
	unlock, err := p.locks.tryLock(h.AccessPointID)
	if err != nil {
		return err
	}
	defer unlock()
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
		if err := rootdir.CheckRootDir(ap.RootDir); err != nil {
			return fmt.Errorf("access point %s kept: %w", ap.ID, err)
		}
		if err := checkNotShared(ctx, c, ap); err != nil {
			return err
		}
		var opts []string
		if req.MountOptions != nil {
			if opts, err = req.MountOptions(ctx); err != nil {
				return fmt.Errorf("access point %s kept: %w", ap.ID, err)
			}
		}
		if err := req.RootDir.Delete(ctx, rootdir.Target{FileSystemID: h.FileSystemID, AccessPointID: ap.ID,
			RootDir: ap.RootDir, MountOptions: opts}); err != nil {
			return fmt.Errorf("access point %s kept: %w", ap.ID, err)
		}
		forget = ap.HasPosixUser
		gid = ap.GID
	}
	err = c.DeleteAccessPoint(ctx, h.AccessPointID)
	if err != nil && !errors.Is(err, cloud.ErrAccessPointNotFound) {
		return err
	}
	if forget {
		p.cfg.GIDs.Forget(key, gid)
	}
	klog.V(2).InfoS("Deleted access point", "accessPointID", h.AccessPointID, "fileSystemID", h.FileSystemID)
	return nil
}

// checkNotShared refuses to delete ap's root directory when another access point of the file system has the same
// root or a root inside it (with ensureUniqueDirectory=false and a pattern such as ${.PVC.namespace}, volumes share
// directories): that is another volume's data. An access point whose root lies above (one rooted at "/" or at the
// StorageClass's basePath) does not stop the deletion: the directory removed is this volume's own, and refusing
// would make every DeleteVolume on the file system fail forever. The access point is kept; the message names the
// other one so the administrator can decide.
func checkNotShared(ctx context.Context, c EFS, ap *cloud.AccessPoint) error {
	aps, err := c.ListAccessPoints(ctx, ap.FileSystemID)
	if err != nil {
		return fmt.Errorf("list access points of %s to check that root directory %s is not shared: %w", ap.FileSystemID, ap.RootDir, err)
	}
	for _, other := range aps {
		if other.ID == ap.ID {
			continue
		}
		var how string
		switch {
		case other.RootDir == ap.RootDir:
			how = "has the same root directory"
		case within(other.RootDir, ap.RootDir):
			how = "has its root directory " + other.RootDir + " inside it"
		default:
			continue
		}
		return fmt.Errorf("%w: access point %s kept and root directory %s of file system %s not deleted: access point %s %s; delete the data by hand once no volume needs it",
			ErrSharedRootDir, ap.ID, ap.RootDir, ap.FileSystemID, other.ID, how)
	}
	return nil
}

// within reports whether dir is strictly below parent (both absolute and clean).
func within(dir, parent string) bool {
	if parent == "/" {
		return dir != "/"
	}
	return strings.HasPrefix(dir, parent+"/")
}
