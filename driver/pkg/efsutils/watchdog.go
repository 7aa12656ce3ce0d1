package efsutils

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

// DefaultWatchdogPath is where the image installs the watchdog.
const DefaultWatchdogPath = "/usr/bin/amazon-efs-mount-watchdog"

// Supervisor runs amazon-efs-mount-watchdog as a child and restarts it with exponential backoff when it exits or
// cannot start. Its output goes to the driver's log. No lock is held while starting or waiting, so a watchdog
// that cannot start never blocks the supervisor or Healthy.
type Supervisor struct {
	// Path and Args are the command; Path defaults to DefaultWatchdogPath.
	Path string
	Args []string
	// MinBackoff and MaxBackoff bound the restart delay (defaults 1s and 1m); a run longer than StableAfter
	// (default 1m) resets it.
	MinBackoff, MaxBackoff, StableAfter time.Duration
	// Grace is how long the watchdog may be down between restarts before Healthy reports it (default 30s).
	Grace time.Duration

	mu       sync.Mutex
	running  bool
	pid      int
	starts   int
	downFrom time.Time
	lastErr  error
}

// Run supervises the watchdog until ctx ends, then stops it (SIGTERM, SIGKILL after 10s) and returns.
func (s *Supervisor) Run(ctx context.Context) {
	minB, maxB, stable := orDefault(s.MinBackoff, time.Second), orDefault(s.MaxBackoff, time.Minute), orDefault(s.StableAfter, time.Minute)
	backoff := minB
	for {
		start := time.Now()
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			klog.V(2).InfoS("efs-utils watchdog stopped")
			return
		}
		if time.Since(start) >= stable {
			backoff = minB
		}
		klog.ErrorS(err, "efs-utils watchdog is not running; restarting", "in", backoff)
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		backoff = min(2*backoff, maxB)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// runOnce starts the watchdog and waits for it; the returned error says why it is not running.
func (s *Supervisor) runOnce(ctx context.Context) (err error) {
	path := s.Path
	if path == "" {
		path = DefaultWatchdogPath
	}
	cmd := exec.CommandContext(ctx, path, s.Args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdout = &lineLogger{stream: "stdout", verbose: true}
	cmd.Stderr = &lineLogger{stream: "stderr"}
	defer func() { s.setDown(err) }()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", path, err)
	}
	s.setRunning(cmd.Process.Pid)
	klog.V(2).InfoS("efs-utils watchdog started", "path", path, "pid", cmd.Process.Pid)
	err = cmd.Wait()
	if err == nil {
		err = errors.New("exited with status 0")
	}
	return fmt.Errorf("%s: %w", path, err)
}

func (s *Supervisor) setRunning(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running, s.pid, s.lastErr = true, pid, nil
	s.starts++
}

func (s *Supervisor) setDown(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.downFrom.IsZero() {
		s.downFrom = time.Now()
	}
	s.running, s.pid, s.lastErr = false, 0, err
}

// Healthy reports nil while the watchdog runs, or has been down for less than Grace after running; otherwise
// why it is not running.
func (s *Supervisor) Healthy(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.running:
		return nil
	case s.starts == 0 && s.lastErr == nil:
		return errors.New("efs-utils watchdog has not started yet")
	case s.starts > 0 && time.Since(s.downFrom) < orDefault(s.Grace, 30*time.Second):
		return nil
	}
	return fmt.Errorf("efs-utils watchdog down since %s: %w", s.downFrom.Format(time.RFC3339), s.lastErr)
}

// PID returns the watchdog's process ID, or 0 when it is not running.
func (s *Supervisor) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// lineLogger writes each complete line of a child's output to klog.
type lineLogger struct {
	stream  string
	verbose bool
	buf     []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(bytes.TrimRight(l.buf[:i], "\r"))
		l.buf = l.buf[i+1:]
		if line == "" {
			continue
		}
		if l.verbose {
			klog.V(4).InfoS("efs-utils watchdog", "stream", l.stream, "line", line)
		} else {
			klog.InfoS("efs-utils watchdog", "stream", l.stream, "line", line)
		}
	}
	if len(l.buf) > 64<<10 { // a line without end: log what we have rather than grow without bound
		klog.InfoS("efs-utils watchdog", "stream", l.stream, "line", string(l.buf))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}
