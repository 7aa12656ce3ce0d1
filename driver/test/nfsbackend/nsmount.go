package nfsbackend

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// nsInode returns the inode of /proc/<pid>/ns/mnt ("self" for this process): the identity of its mount namespace.
func nsInode(pid string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join("/proc", pid, "ns", "mnt"), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// findNamespaceMember returns a process in the mount namespace with inode ino, trying hint first.
func findNamespaceMember(ino uint64, hint int) (int, error) {
	if hint > 0 {
		if got, err := nsInode(strconv.Itoa(hint)); err == nil && got == ino {
			return hint, nil
		}
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if got, err := nsInode(e.Name()); err == nil && got == ino {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process in mount namespace mnt:[%d]", ino)
}

// inNamespace runs fn on an OS thread that has entered the mount namespace of pid (checked to be ino). The thread
// first unshares its file system attributes (setns into a mount namespace needs them unshared, and Go's threads
// share them), and is never unlocked, so that Go ends it with the goroutine instead of reusing it.
func inNamespace(pid int, ino uint64, fn func() error) error {
	nsf, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	if err != nil {
		return err
	}
	defer nsf.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(nsf.Fd()), &st); err != nil {
		return err
	}
	if st.Ino != ino {
		return fmt.Errorf("process %d left mount namespace mnt:[%d]", pid, ino)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- fmt.Errorf("unshare(CLONE_FS): %w", err)
			return
		}
		if err := unix.Setns(int(nsf.Fd()), unix.CLONE_NEWNS); err != nil {
			errc <- fmt.Errorf("setns(mnt:[%d]): %w", ino, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// bindInNamespace mounts a clone of the directory dir (an open directory of the backing store) at target in the
// mount namespace of pid: open_tree(2) makes a detached bind mount here, move_mount(2) attaches it there. In a
// shared mount (the kubelet directory, mounted Bidirectional into the node container) the mount propagates to
// the host and from there into application pods, as an NFS mount made by the node plugin does.
func bindInNamespace(dir *os.File, pid int, ino uint64, target string) error {
	tree, err := unix.OpenTree(int(dir.Fd()), "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", dir.Name(), err)
	}
	defer unix.Close(tree)
	return inNamespace(pid, ino, func() error {
		if err := unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("move_mount to %s: %w", target, err)
		}
		return nil
	})
}

// unmountInNamespace lazily unmounts target in the mount namespace of pid.
func unmountInNamespace(pid int, ino uint64, target string) error {
	return inNamespace(pid, ino, func() error {
		if err := unix.Unmount(target, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("umount %s: %w", target, err)
		}
		return nil
	})
}
