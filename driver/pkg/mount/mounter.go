package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
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
	// StaleAfter bounds the stat that tells a live mount from one whose server stopped answering; 0 means
	// DefaultStaleAfter.
	StaleAfter time.Duration
}

// DefaultStaleAfter is how long a stat of a published target may take before the mount counts as stale. A healthy
// EFS mount answers a stat of its root from the attribute cache or in one round trip.
const DefaultStaleAfter = 5 * time.Second

// Mounter publishes and unpublishes volumes at target paths, idempotently.
type Mounter struct {
	cfg Config
	// mu serialises the check-and-reserve of publish records, never a mount itself.
	mu sync.Mutex
	// probes are the stats of targets still running, one at most per target (see responsive).
	probeMu sync.Mutex
	probes  map[string]bool
}

// New returns a Mounter.
func New(cfg Config) *Mounter {
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	return &Mounter{cfg: cfg, probes: map[string]bool{}}
}

// Publish mounts spec at target for volumeID. A target that already has the same volume with the same mount is
// left as it is; one with anything else is ErrAlreadyPublished. singleWriter refuses a volume already published
// at another live target (ErrSingleWriter). On a failed mount the record and a target directory Publish created
// are removed again.
func (m *Mounter) Publish(ctx context.Context, volumeID, target string, spec Spec, singleWriter bool) error {
	for layer := 0; ; layer++ {
		mounted, err := m.isMounted(target)
		if err != nil {
			return fmt.Errorf("%w: check target %s: %w", ErrMount, target, err)
		}
		if !mounted {
			break
		}
		if err := m.checkExisting(volumeID, target, spec); err != nil {
			return err
		}
		// The same volume is mounted there; it counts as published only if it answers. A mount whose server (or
		// relay) stopped answering is detached and mounted again, as kubelet expects of a corrupted mount point
		// (mount-utils IsCorruptedMnt); otherwise the pod would get a target that hangs on first use.
		stale := m.responsive(target)
		if stale == nil {
			return nil
		}
		if layer == maxLayers {
			return fmt.Errorf("%w: %s is still a stale mount point after %d detaches: %w", ErrMount, target, maxLayers, stale)
		}
		klog.InfoS("Published target does not answer; detaching the mount and mounting again", "volumeID", volumeID, "target", target, "reason", stale.Error())
		if err := detach(target); err != nil {
			return fmt.Errorf("%w: detach stale mount %s: %w", ErrMount, target, err)
		}
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

// isMounted reports whether target is a mount point, from the mount table alone: target itself is never stat'ed,
// because a stat of a mount whose server stopped answering blocks (mount-utils' IsMountPoint lstat's it while
// resolving symbolic links). Only target's parent, kubelet's own directory, is resolved. A missing parent is not
// mounted.
func (m *Mounter) isMounted(target string) (bool, error) {
	parent, err := filepath.EvalSymlinks(filepath.Dir(target))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	resolved := filepath.Join(parent, filepath.Base(target))
	mps, err := m.cfg.OS.List()
	if err != nil {
		return false, fmt.Errorf("read the mount table: %w", err)
	}
	for _, mp := range mps {
		if strings.TrimSuffix(mp.Path, `\040(deleted)`) == resolved {
			return true, nil
		}
	}
	return false, nil
}

// errStale means a mounted target did not answer a stat in time, or answered with a corrupted-mount error.
var errStale = errors.New("mount does not answer")

// responsive stats target within StaleAfter. The stat runs in its own goroutine because a stat of a hard NFS mount
// whose server is gone blocks until the mount is forcibly detached; at most one such stat runs per target, and a
// target whose earlier stat has not returned is stale without another one.
func (m *Mounter) responsive(target string) error {
	m.probeMu.Lock()
	if m.probes[target] {
		m.probeMu.Unlock()
		return fmt.Errorf("%w: an earlier stat of %s has not returned", errStale, target)
	}
	m.probes[target] = true
	m.probeMu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := os.Stat(target)
		m.probeMu.Lock()
		delete(m.probes, target)
		m.probeMu.Unlock()
		done <- err
	}()
	timer := time.NewTimer(m.cfg.StaleAfter)
	defer timer.Stop()
	select {
	case err := <-done:
		if mountutils.IsCorruptedMnt(err) {
			return fmt.Errorf("%w: stat %s: %w", errStale, target, err)
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("%w: stat %s did not return within %s", errStale, target, m.cfg.StaleAfter)
	}
}

// detach removes the top mount at target without waiting for its server: MNT_FORCE aborts the requests in flight
// (NFS umount_begin), so the stats blocked on it return, and MNT_DETACH unhooks the mount at once.
func detach(target string) error {
	return unix.Unmount(target, unix.MNT_FORCE|unix.MNT_DETACH)
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
		if stale := m.responsive(target); stale != nil {
			// umount(8) resolves the path, which blocks on a mount that does not answer: detach it instead.
			klog.InfoS("Target does not answer; detaching it", "volumeID", volumeID, "target", target, "reason", stale.Error())
			err = detach(target)
		} else if m.cfg.ForceUnmount {
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
