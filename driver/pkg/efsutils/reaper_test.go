package efsutils

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func syscallKill0(pid int) error { return syscall.Kill(pid, 0) }

func TestReadStat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(p, []byte("42 (stun nel) Z 7 42 42 0 -1"), 0o644); err != nil {
		t.Fatal(err)
	}
	comm, state, ppid, ok := readStat(p)
	if !ok || comm != "stun nel" || state != "Z" || ppid != 7 {
		t.Fatalf("readStat = %q %q %d %v", comm, state, ppid, ok)
	}
}

// TestReaperReapsOrphanedRelays makes the test process a subreaper, starts a shell that leaves a process named
// stunnel behind and exits (as mount.efs leaves its relay), and checks the reaper waits for it once it dies,
// leaving an unrelated zombie child alone.
func TestReaperReapsOrphanedRelays(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("needs a Linux kernel with prctl(PR_SET_CHILD_SUBREAPER) (3.4 or later, not seccomp-filtered): %v", err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("needs sleep(1) on PATH: apt-get install coreutils")
	}
	dir := t.TempDir()
	relay := filepath.Join(dir, "stunnel")
	if err := os.Symlink(sleep, relay); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "pid")
	sh := exec.CommandContext(t.Context(), "sh", "-c", relay+" 0.2 & echo $! > "+pidFile)
	if err := sh.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// our own child that is not a relay: started but not waited for yet
	own := exec.CommandContext(t.Context(), sleep, "0")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	r := &Reaper{Interval: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the orphaned relay to be reaped", func() bool {
		_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
		return os.IsNotExist(err)
	})
	if err := own.Wait(); err != nil {
		t.Fatalf("the reaper took our own child's exit status: %v", err)
	}
}
