package efsutils

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "amazon-efs-mount-watchdog")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runSupervisor(t *testing.T, s *Supervisor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("supervisor did not stop")
		}
	}
}

func TestSupervisorRestartsAndStops(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	// exits at once twice, then stays up
	path := script(t, `echo x >> `+starts+`
n=$(wc -l < `+starts+`)
echo "started $n"; echo "to stderr" >&2
[ "$n" -ge 3 ] && exec sleep 60
exit 3
`)
	s := &Supervisor{Path: path, MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}
	stop := runSupervisor(t, s)
	waitFor(t, "third start", func() bool { return s.PID() != 0 && strings.Count(readFile(starts), "x") == 3 })
	if err := s.Healthy(t.Context()); err != nil {
		t.Fatalf("Healthy while running: %v", err)
	}
	pid := s.PID()
	stop()
	if err := syscallKill0(pid); err == nil {
		t.Fatalf("watchdog %d still running after stop", pid)
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func TestSupervisorCannotStart(t *testing.T) {
	s := &Supervisor{Path: filepath.Join(t.TempDir(), "missing"), MinBackoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, Grace: time.Nanosecond}
	if err := s.Healthy(t.Context()); err == nil || !strings.Contains(err.Error(), "not started yet") {
		t.Fatalf("Healthy before start = %v", err)
	}
	stop := runSupervisor(t, s)
	// many failed starts must not wedge the supervisor (upstream kept its lock on a failed Start)
	var mu sync.Mutex
	waitFor(t, "a reported start failure", func() bool {
		mu.Lock()
		defer mu.Unlock()
		err := s.Healthy(t.Context())
		return err != nil && strings.Contains(err.Error(), "no such file")
	})
	stop() // and it stops while backing off
}

func TestSupervisorHealthGrace(t *testing.T) {
	path := script(t, "exit 1\n")
	s := &Supervisor{Path: path, MinBackoff: time.Hour, Grace: time.Hour}
	stop := runSupervisor(t, s)
	defer stop()
	waitFor(t, "the first exit", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.starts == 1 && !s.running && s.lastErr != nil
	})
	if err := s.Healthy(t.Context()); err != nil {
		t.Fatalf("within grace: %v", err)
	}
	s.mu.Lock()
	s.Grace = time.Nanosecond
	s.mu.Unlock()
	if err := s.Healthy(t.Context()); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("after grace: %v, want the exit status", err)
	}
}

func TestLineLogger(t *testing.T) {
	l := &lineLogger{stream: "stderr"}
	for _, chunk := range []string{"par", "tial\nsecond\n", "\r\nthird"} {
		if n, err := l.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if string(l.buf) != "third" {
		t.Fatalf("buffered %q, want the unfinished line", l.buf)
	}
}
