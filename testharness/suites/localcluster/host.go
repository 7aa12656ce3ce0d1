package localcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machineLock is the lock one local cluster holds on this machine (see the package comment).
const machineLock = "/run/lock/aws-efs-csi-local-cluster.lock"

// lockMachine waits for the machine-wide lock and returns its open file (closing every copy releases it).
func lockMachine(ctx context.Context, log io.Writer) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(machineLock), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(machineLock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", machineLock, err)
		}
		fmt.Fprintf(log, "localcluster: another local cluster runs on this machine; waiting for %s\n", machineLock)
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

// cgroupHierarchies are the mount points of the cgroup v1 hierarchies, and with unified also of the cgroup v2
// hierarchy (in which runc mirrors v1 cgroups on a hybrid host).
func cgroupHierarchies(unified bool) ([]string, error) {
	mounts, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if m.fsType == "cgroup" || (unified && m.fsType == "cgroup2") {
			out = append(out, m.mountPoint)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no cgroup v1 hierarchy mounted: this harness configures the kubelet for cgroup v1")
	}
	return out, nil
}

// createCgroupRoot makes the kubelet's cgroup root in every hierarchy; in cpuset it copies the parent's CPUs and
// memory nodes, which a new cpuset cgroup otherwise lacks.
func createCgroupRoot(root string) error {
	hs, err := cgroupHierarchies(false)
	if err != nil {
		return err
	}
	for _, h := range hs {
		dir := filepath.Join(h, root)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
					return fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
				}
			}
		}
	}
	return nil
}

// removeCgroupRoot kills whatever still runs in the cgroup root and removes it, deepest cgroups first.
func removeCgroupRoot(root string) error {
	hs, err := cgroupHierarchies(true)
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range hs {
		top := filepath.Join(h, root)
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := killCgroup(d); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// killCgroup sends SIGKILL to every process of cgroup dir until it is empty, then removes it.
func killCgroup(dir string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return nil // already gone
		}
		pids := strings.Fields(string(b))
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s still has processes %v", dir, pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 50 {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // the kernel frees a cgroup a moment after its last process exits
	}
	return os.Remove(dir)
}

type mount struct{ mountPoint, fsType string }

func readMountInfo() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mount{mountPoint: unescapeMount(fields[4]), fsType: fields[sep+1]})
	}
	return out, sc.Err()
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsUnder lists the mount points at or below any of dirs, deepest first.
func mountsUnder(dirs ...string) ([]string, error) {
	ms, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		for _, d := range dirs {
			if m.mountPoint == d || strings.HasPrefix(m.mountPoint, d+"/") {
				out = append(out, m.mountPoint)
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// unmountAll detaches every mount at or below dirs.
func unmountAll(dirs ...string) error {
	var errs []error
	for range 3 { // stacked mounts show once per layer
		ms, err := mountsUnder(dirs...)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return nil
		}
		errs = errs[:0]
		for _, m := range ms {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
			}
		}
	}
	if ms, _ := mountsUnder(dirs...); len(ms) > 0 {
		return errors.Join(append(errs, fmt.Errorf("still mounted: %v", ms))...)
	}
	return nil
}

// processesWithArg returns the PIDs whose command line has arg right after flag (e.g. shims of one containerd:
// "-address <socket>").
func processesWithArg(flag, arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		for i := 0; i+1 < len(args); i++ {
			if args[i] == flag && args[i+1] == arg {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// listDir returns the names in dir, none when it does not exist.
func listDir(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
