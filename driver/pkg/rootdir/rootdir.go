package rootdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"k8s.io/klog/v2"
	mountutils "k8s.io/mount-utils"

	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrUnsafePath is wrapped when a root directory would reach outside the access point's own directory.
var ErrUnsafePath = errors.New("unsafe access point root directory")

// Mounter mounts a file system at a directory and unmounts it.
type Mounter interface {
	// Mount mounts source ("fs-…:/") at target with the given options.
	Mount(ctx context.Context, source, target string, options []string) error
	// Unmount unmounts target.
	Unmount(ctx context.Context, target string) error
}

// Deleter removes access point root directories.
type Deleter struct {
	// Mounter mounts the file system root.
	Mounter Mounter
	// WorkDir holds one temporary mount point per access point (upstream: /var/lib/csi/pv).
	WorkDir string
	// IsMountPoint reports whether a path is a mount point; nil reads /proc/self/mountinfo (k8s.io/mount-utils).
	IsMountPoint func(path string) (bool, error)
}

// Target is one root directory to delete.
type Target struct {
	FileSystemID  string
	AccessPointID string
	// RootDir is the access point's root directory, absolute.
	RootDir string
	// MountOptions are the efs mount options for the file system root (tls, iam, mounttargetip=…).
	MountOptions []string
}

// CheckRootDir refuses a root directory that is empty, relative, the file system root, or not clean (so that it
// cannot contain "..").
func CheckRootDir(dir string) error {
	switch {
	case dir == "" || !strings.HasPrefix(dir, "/"):
		return fmt.Errorf("%w: %q: want an absolute path", ErrUnsafePath, dir)
	case dir == "/":
		return fmt.Errorf("%w: %q is the file system root", ErrUnsafePath, dir)
	}
	if dotDot, dot := volume.DotElements(dir); dotDot || dot || path.Clean(dir) != dir {
		return fmt.Errorf("%w: %q is not a clean path", ErrUnsafePath, dir)
	}
	return nil
}

// Delete mounts the file system root, removes the access point's root directory and everything below it, and
// unmounts. A symbolic link on the way cannot lead the removal elsewhere: it goes through an os.Root opened at the
// mount point. Any failure is returned, so the caller keeps the access point and a retry can finish the job.
func (d *Deleter) Delete(ctx context.Context, t Target) (err error) {
	if err := CheckRootDir(t.RootDir); err != nil {
		return err
	}
	mountPoint := filepath.Join(d.WorkDir, t.AccessPointID)
	if err := os.MkdirAll(mountPoint, 0o700); err != nil {
		return fmt.Errorf("create mount point %s: %w", mountPoint, err)
	}
	if err := d.clearLeftoverMounts(ctx, mountPoint); err != nil {
		return err
	}
	if err := d.Mounter.Mount(ctx, t.FileSystemID+":/", mountPoint, t.MountOptions); err != nil {
		_ = os.Remove(mountPoint)
		return fmt.Errorf("mount %s at %s: %w", t.FileSystemID, mountPoint, err)
	}
	defer func() {
		if uerr := d.Mounter.Unmount(context.WithoutCancel(ctx), mountPoint); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unmount %s: %w", mountPoint, uerr))
			return
		}
		if rerr := os.Remove(mountPoint); rerr != nil {
			klog.ErrorS(rerr, "Removing temporary mount point", "path", mountPoint)
		}
	}()
	root, err := os.OpenRoot(mountPoint)
	if err != nil {
		return fmt.Errorf("open %s: %w", mountPoint, err)
	}
	defer root.Close()
	rel := strings.TrimPrefix(t.RootDir, "/")
	if err := root.RemoveAll(rel); err != nil {
		return fmt.Errorf("remove root directory %s of access point %s: %w", t.RootDir, t.AccessPointID, err)
	}
	klog.V(2).InfoS("Deleted access point root directory", "accessPointID", t.AccessPointID, "fileSystemID", t.FileSystemID, "rootDir", t.RootDir)
	return nil
}

// maxLeftoverMounts bounds how many stale mounts on one work directory are taken off before giving up.
const maxLeftoverMounts = 8

// clearLeftoverMounts unmounts whatever is still mounted on mountPoint (a controller that crashed, or an unmount
// that failed, after an earlier attempt), so that the new mount is not stacked on an old one and the deferred
// unmount leaves the directory empty.
func (d *Deleter) clearLeftoverMounts(ctx context.Context, mountPoint string) error {
	isMountPoint := d.IsMountPoint
	if isMountPoint == nil {
		isMountPoint = mountutils.NewWithoutSystemd("").IsMountPoint
	}
	for range maxLeftoverMounts {
		mounted, err := isMountPoint(mountPoint)
		if err != nil {
			return fmt.Errorf("check whether %s is still mounted: %w", mountPoint, err)
		}
		if !mounted {
			return nil
		}
		klog.InfoS("Unmounting a leftover mount of an earlier root directory deletion", "path", mountPoint)
		if err := d.Mounter.Unmount(ctx, mountPoint); err != nil {
			return fmt.Errorf("unmount leftover mount at %s: %w", mountPoint, err)
		}
	}
	return fmt.Errorf("%s is still mounted after %d unmounts", mountPoint, maxLeftoverMounts)
}

// ExecMounter runs mount(8) -t efs, which hands over to efs-utils' mount.efs, and umount(8).
type ExecMounter struct {
	// MountCommand and UnmountCommand default to "mount" and "umount".
	MountCommand, UnmountCommand string
}

var _ Mounter = ExecMounter{}

// Mount runs `mount -t efs -o <options> <source> <target>`.
func (m ExecMounter) Mount(ctx context.Context, source, target string, options []string) error {
	cmd := m.MountCommand
	if cmd == "" {
		cmd = "mount"
	}
	args := []string{"-t", "efs"}
	if len(options) > 0 {
		args = append(args, "-o", strings.Join(options, ","))
	}
	args = append(args, source, target)
	if out, err := exec.CommandContext(ctx, cmd, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Unmount runs `umount <target>`.
func (m ExecMounter) Unmount(ctx context.Context, target string) error {
	cmd := m.UnmountCommand
	if cmd == "" {
		cmd = "umount"
	}
	if out, err := exec.CommandContext(ctx, cmd, target).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", cmd, target, err, strings.TrimSpace(string(out)))
	}
	return nil
}
