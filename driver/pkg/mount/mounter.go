package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"k8s.io/klog/v2"
	mountutils "k8s.io/mount-utils"
)

var (
	// ErrAlreadyPublished means the target already has a different volume or mount (CSI AlreadyExists).
	ErrAlreadyPublished = errors.New("target path already has a different mount")
	// ErrSingleWriter means a SINGLE_NODE_SINGLE_WRITER volume is already published at another target
	// (FailedPrecondition).
	ErrSingleWriter = errors.New("single-writer volume is already published at another target on this node")
	// ErrMount wraps a failed mount (Internal).
	ErrMount = errors.New("mount failed")
	// ErrUnmount wraps a failed unmount or target removal (Internal).
	ErrUnmount = errors.New("unmount failed")
)

// OS is the part of k8s.io/mount-utils the mounter uses: running mount(8)/umount(8) and reading
// /proc/self/mountinfo. It shields the driver from changes of the wider mount-utils interface.
type OS interface {
	Mount(source, target, fstype string, options []string) error
	Unmount(target string) error
	UnmountWithForce(target string, timeout time.Duration) error
	IsMountPoint(file string) (bool, error)
	List() ([]mountutils.MountPoint, error)
}

var _ OS = (*mountutils.Mounter)(nil)

// NewOS returns the production OS: mount-utils without systemd-run scopes (the driver runs in a container, and
// mount.efs must inherit the driver's environment), which runs `mount -t efs`.
func NewOS() OS {
	return mountutils.NewWithoutSystemd("").(*mountutils.Mounter)
}

// Config configures a Mounter.
type Config struct {
	OS      OS
	Records *Records
	// StateDir is the efs-utils state directory (/var/run/efs), read to identify TLS mounts without a record.
	StateDir string
	// ForceUnmount runs `umount -f` when a plain umount has not finished after ForceUnmountAfter; a duration of 0
	// or less forces at once, as upstream's --unmount-timeout=0 does through mount-utils' UnmountWithForce.
	ForceUnmount      bool
	ForceUnmountAfter time.Duration
}

// Mounter publishes and unpublishes volumes at target paths, idempotently.
type Mounter struct {
	cfg Config
	// mu serialises the check-and-reserve of publish records, never a mount itself.
	mu sync.Mutex
}

// New returns a Mounter.
func New(cfg Config) *Mounter { return &Mounter{cfg: cfg} }

// Publish mounts spec at target for volumeID. A target that already has the same volume with the same mount is
// left as it is; one with anything else is ErrAlreadyPublished. singleWriter refuses a volume already published
// at another live target (ErrSingleWriter). On a failed mount the record and a target directory Publish created
// are removed again.
func (m *Mounter) Publish(ctx context.Context, volumeID, target string, spec Spec, singleWriter bool) error {
	mounted, err := m.isMounted(target)
	if err != nil {
		return fmt.Errorf("%w: check target %s: %w", ErrMount, target, err)
	}
	if mounted {
		return m.checkExisting(volumeID, target, spec)
	}
	rec := Record{VolumeID: volumeID, Target: target, Source: spec.Source, FSType: spec.FSType, Options: spec.Options, SingleWriter: singleWriter}
	if err := m.reserve(rec); err != nil {
		return err
	}
	created := false
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(target, 0o750); err != nil {
			_ = m.cfg.Records.Delete(target)
			return fmt.Errorf("%w: create target %s: %w", ErrMount, target, err)
		}
		created = true
	}
	klog.V(2).InfoS("Mounting", "volumeID", volumeID, "source", spec.Source, "target", target, "options", spec.Options)
	if err := m.cfg.OS.Mount(spec.Source, target, spec.FSType, spec.Options); err != nil {
		_ = m.cfg.Records.Delete(target)
		if created {
			_ = os.Remove(target)
		}
		return fmt.Errorf("%w: volume %s at %s: %w", ErrMount, volumeID, target, err)
	}
	if ctx.Err() != nil {
		klog.InfoS("Mounted after the caller gave up; a retry will find the mount", "volumeID", volumeID, "target", target)
	}
	return nil
}

// reserve writes rec, after checking that a single-writer volume is not published at another live target.
func (m *Mounter) reserve(rec Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	all, err := m.cfg.Records.List()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMount, err)
	}
	for _, other := range all {
		if other.VolumeID != rec.VolumeID || other.Target == rec.Target || !(rec.SingleWriter || other.SingleWriter) {
			continue
		}
		live, err := m.isMounted(other.Target)
		if err == nil && !live {
			_ = m.cfg.Records.Delete(other.Target) // stale: the target was unmounted behind our back
			continue
		}
		return fmt.Errorf("%w: volume %s is mounted at %s; single-node-single-writer volumes allow one target", ErrSingleWriter, rec.VolumeID, other.Target)
	}
	return m.cfg.Records.Put(rec)
}

// checkExisting decides about a target that is already a mount point.
func (m *Mounter) checkExisting(volumeID, target string, spec Spec) error {
	rec, ok, err := m.cfg.Records.Get(target)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMount, err)
	}
	if ok {
		if rec.VolumeID == volumeID && rec.spec().Key() == spec.Key() {
			klog.V(4).InfoS("Already published", "volumeID", volumeID, "target", target)
			return nil
		}
		return fmt.Errorf("%w: %s has volume %s mounted as %q, the request is volume %s as %q",
			ErrAlreadyPublished, target, rec.VolumeID, rec.spec().Key(), volumeID, spec.Key())
	}
	found, err := m.identify(target)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMount, err)
	}
	if err := found.matches(spec); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrAlreadyPublished, target, err)
	}
	klog.InfoS("Adopting a mount made before publish records existed", "volumeID", volumeID, "target", target, "source", found.device)
	return m.cfg.Records.Put(Record{VolumeID: volumeID, Target: target, Source: spec.Source, FSType: spec.FSType, Options: spec.Options})
}

// isMounted reports whether target is a mount point; a missing target is not, a corrupted (stale NFS) one is.
func (m *Mounter) isMounted(target string) (bool, error) {
	mounted, err := m.cfg.OS.IsMountPoint(target)
	switch {
	case err == nil:
		return mounted, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case mountutils.IsCorruptedMnt(err):
		return true, nil
	}
	return false, err
}

// maxLayers bounds how many stacked mounts Unpublish removes (older drivers mounted again on every retry).
const maxLayers = 8

// Unpublish unmounts target (every stacked layer), removes its record and the target directory. A target that is
// not mounted, or does not exist, is fine.
func (m *Mounter) Unpublish(ctx context.Context, volumeID, target string) error {
	if rec, ok, _ := m.cfg.Records.Get(target); ok && rec.VolumeID != volumeID {
		klog.InfoS("Unpublishing a target recorded for another volume", "volumeID", volumeID, "recordedVolumeID", rec.VolumeID, "target", target)
	}
	for layer := 0; ; layer++ {
		mounted, err := m.isMounted(target)
		if err != nil {
			return fmt.Errorf("%w: check target %s: %w", ErrUnmount, target, err)
		}
		if !mounted {
			break
		}
		if layer == maxLayers {
			return fmt.Errorf("%w: %s is still a mount point after %d unmounts", ErrUnmount, target, maxLayers)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		klog.V(2).InfoS("Unmounting", "volumeID", volumeID, "target", target)
		if m.cfg.ForceUnmount {
			err = m.cfg.OS.UnmountWithForce(target, m.cfg.ForceUnmountAfter)
		} else {
			err = m.cfg.OS.Unmount(target)
		}
		if err != nil {
			return fmt.Errorf("%w: volume %s at %s: %w", ErrUnmount, volumeID, target, err)
		}
	}
	if err := m.cfg.Records.Delete(target); err != nil {
		return fmt.Errorf("%w: %w", ErrUnmount, err)
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: remove target directory %s: %w", ErrUnmount, target, err)
	}
	return nil
}
