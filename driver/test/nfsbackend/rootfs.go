package nfsbackend

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The files the backend keeps for a caller (its NFS mount table) and the mount points it checks are paths in the
// caller's container. Going through /proc/<pid>/root is not enough: an absolute symbolic link on the way (Debian's
// /var/run -> /run) would be resolved against this process's root, the host's. openat2(RESOLVE_IN_ROOT) resolves
// every link inside the container's root, as the container's own processes do.

// openInRoot opens p (absolute, in pid's root) with flags and mode.
func openInRoot(pid int, p string, flags int, mode uint32) (int, error) {
	root, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(root)
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	for {
		fd, err := unix.Openat2(root, p, how)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) { // a concurrent rename; try again
			continue
		}
		return fd, err
	}
}

// statInRoot stats p in pid's root.
func statInRoot(pid int, p string) (unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := openInRoot(pid, p, unix.O_PATH, 0)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	err = unix.Fstat(fd, &st)
	return st, err
}

// mkdirAllInRoot creates the directory dir and its missing parents (mode 0755) in pid's root.
func mkdirAllInRoot(pid int, dir string) error {
	cur := "/"
	for _, elem := range strings.Split(strings.Trim(path.Clean(dir), "/"), "/") {
		if elem == "" {
			continue
		}
		parent, err := openInRoot(pid, cur, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", cur, err)
		}
		err = unix.Mkdirat(parent, elem, 0o755)
		unix.Close(parent)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("mkdir %s: %w", path.Join(cur, elem), err)
		}
		cur = path.Join(cur, elem)
	}
	return nil
}

// readInRoot reads the file p in pid's root.
func readInRoot(pid int, p string) ([]byte, error) {
	fd, err := openInRoot(pid, p, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			out = append(out, buf[:n]...)
		}
		if err != nil {
			return out, err
		}
		if n == 0 {
			return out, nil
		}
	}
}

// replaceInRoot replaces the file p in pid's root with data: written to a temporary file beside it, then renamed
// over it, so that a reader sees the old or the new content, never a part.
func replaceInRoot(pid int, p string, data []byte) error {
	dir, err := openInRoot(pid, path.Dir(p), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	name := path.Base(p)
	tmp := "." + name + ".tmp"
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", path.Join(path.Dir(p), tmp), err)
	}
	for len(data) > 0 {
		n, werr := unix.Write(fd, data)
		if werr != nil {
			unix.Close(fd)
			return werr
		}
		data = data[n:]
	}
	if err := unix.Close(fd); err != nil {
		return err
	}
	return unix.Renameat(dir, tmp, dir, name)
}
