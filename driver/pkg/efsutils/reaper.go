package efsutils

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// Reaper waits for zombie relay processes (stunnel) that were orphaned to the driver: mount.efs starts a relay
// and exits, so the relay's parent becomes PID 1 (the driver in its container) or the nearest subreaper. Only
// zombies with one of Names are reaped, so the driver's own children (mount, the watchdog) keep their exit status
// for os/exec.
type Reaper struct {
	// Names are the command names (/proc/<pid>/stat comm) to reap; default stunnel, stunnel4, stunnel5, efs-proxy.
	Names []string
	// Interval is the scan period besides SIGCHLD (signals coalesce); default 30s.
	Interval time.Duration
	// Subreaper makes the driver the parent of orphans even when it is not PID 1 (prctl PR_SET_CHILD_SUBREAPER).
	Subreaper bool
	// ProcDir is /proc unless set (tests).
	ProcDir string
}

// Run reaps on every SIGCHLD and every Interval until ctx ends.
func (r *Reaper) Run(ctx context.Context) {
	if r.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			klog.ErrorS(err, "Cannot become the subreaper of orphaned relays; relying on PID 1")
		}
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	ticker := time.NewTicker(orDefault(r.Interval, 30*time.Second))
	defer ticker.Stop()
	for {
		r.ReapOnce()
		select {
		case <-ctx.Done():
			return
		case <-sigs:
		case <-ticker.C:
		}
	}
}

// ReapOnce waits for every current zombie child named in Names and returns their PIDs.
func (r *Reaper) ReapOnce() []int {
	names := r.Names
	if len(names) == 0 {
		names = []string{"stunnel", "stunnel4", "stunnel5", "efs-proxy"}
	}
	proc := r.ProcDir
	if proc == "" {
		proc = "/proc"
	}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var reaped []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, state, ppid, ok := readStat(filepath.Join(proc, e.Name(), "stat"))
		if !ok || state != "Z" || ppid != self || !slices.Contains(names, comm) {
			continue
		}
		var ws unix.WaitStatus
		if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == pid {
			klog.V(4).InfoS("Reaped orphaned relay", "pid", pid, "command", comm, "exitStatus", ws.ExitStatus())
			reaped = append(reaped, pid)
		}
	}
	return reaped
}

// readStat parses comm, state and ppid from /proc/<pid>/stat ("pid (comm) S ppid …"; comm may hold spaces).
func readStat(path string) (comm, state string, ppid int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", 0, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", "", 0, false
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 2 {
		return "", "", 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return s[open+1 : end], fields[0], ppid, err == nil
}
