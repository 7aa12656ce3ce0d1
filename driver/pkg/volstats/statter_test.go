package volstats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestGetMeasuresInBackground(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 5; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), make([]byte, 8192), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Config{})
	defer s.Close()
	if _, ok := s.Get("vol-1", "fs-1", dir); ok {
		t.Fatal("usage before the first walk")
	}
	var u Usage
	eventually(t, "the first measurement", func() bool { var ok bool; u, ok = s.Get("vol-1", "fs-1", dir); return ok })
	if u.InodesUsed != 6 || u.BytesUsed < 5*8192 || u.BytesTotal <= 0 || u.InodesTotal <= 0 || u.BytesAvailable > u.BytesTotal {
		t.Fatalf("usage = %+v; want 6 inodes, at least 40 KiB used, totals from statfs", u)
	}
}

// TestPerFileSystemLimit runs 8 volumes of one file system with a limit of 2 and checks no more than two walks
// ran at once, while another file system is not held up.
func TestPerFileSystemLimit(t *testing.T) {
	var cur, peak atomic.Int32
	release := make(chan struct{})
	var otherDone atomic.Bool
	walk := func(stop <-chan struct{}, path string) (int64, int64, error) {
		if filepath.Base(path) == "other" {
			otherDone.Store(true)
			return 1, 1, nil
		}
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		defer cur.Add(-1)
		select {
		case <-release:
		case <-stop:
			return 0, 0, ErrStopped
		}
		return 1, 1, nil
	}
	s := New(Config{PerFileSystem: 2, Walk: walk})
	defer s.Close()
	dir := t.TempDir()
	for i := 0; i < 8; i++ {
		s.Get(fmt.Sprintf("vol-%d", i), "fs-a", dir)
	}
	other := filepath.Join(dir, "other")
	_ = os.Mkdir(other, 0o755)
	s.Get("vol-other", "fs-b", other)
	eventually(t, "the other file system's walk", otherDone.Load)
	eventually(t, "two walks running", func() bool { return cur.Load() == 2 })
	close(release)
	eventually(t, "every volume measured", func() bool {
		for i := 0; i < 8; i++ {
			if _, ok := s.Get(fmt.Sprintf("vol-%d", i), "fs-a", dir); !ok {
				return false
			}
		}
		return true
	})
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrent walks = %d, want 2", p)
	}
}

// TestFailedWalkReleasesEverything: a failing walk must free its slot and its running mark (upstream leaked
// both, so the volume was never measured again).
func TestFailedWalkReleasesEverything(t *testing.T) {
	var calls atomic.Int32
	walk := func(<-chan struct{}, string) (int64, int64, error) {
		if calls.Add(1) <= 3 {
			return 0, 0, errors.New("stale file handle")
		}
		return 7, 1, nil
	}
	s := New(Config{PerFileSystem: 1, Walk: walk})
	defer s.Close()
	dir := t.TempDir()
	var u Usage
	eventually(t, "a measurement after three failures", func() bool { var ok bool; u, ok = s.Get("vol", "fs", dir); return ok })
	if u.BytesUsed != 7 || calls.Load() != 4 {
		t.Fatalf("usage %+v after %d walks", u, calls.Load())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.slots["fs"]); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}

func TestRefreshAndForget(t *testing.T) {
	var calls atomic.Int32
	gate := make(chan struct{}, 10)
	walk := func(stop <-chan struct{}, _ string) (int64, int64, error) {
		select {
		case <-gate:
		case <-stop:
			return 0, 0, ErrStopped
		}
		return int64(calls.Add(1)), 1, nil
	}
	s := New(Config{RefreshPeriod: time.Millisecond, Walk: walk})
	defer s.Close()
	dir := t.TempDir()
	gate <- struct{}{}
	eventually(t, "first", func() bool { _, ok := s.Get("vol", "fs", dir); return ok })
	time.Sleep(2 * time.Millisecond)
	gate <- struct{}{}
	eventually(t, "a refresh after the period", func() bool { u, _ := s.Get("vol", "fs", dir); return u.BytesUsed == 2 })

	// Forget while a walk runs: the result is dropped
	s.Forget("vol", dir)
	s.Get("vol", "fs", dir)
	s.Forget("vol", dir)
	gate <- struct{}{}
	eventually(t, "the dropped walk to finish", func() bool { return calls.Load() >= 3 })
	s.mu.Lock()
	_, present := s.entries[target{"vol", dir}]
	s.mu.Unlock()
	if present {
		t.Fatal("a forgotten volume came back")
	}
}

func TestCloseStopsWaitingAndRunningWalks(t *testing.T) {
	walk := func(stop <-chan struct{}, _ string) (int64, int64, error) {
		<-stop
		return 0, 0, ErrStopped
	}
	s := New(Config{PerFileSystem: 1, Walk: walk})
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ { // one walks, three wait for the slot
		s.Get(fmt.Sprint(i), "fs", dir)
	}
	wg.Add(1)
	go func() { defer wg.Done(); s.Close() }()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the walks")
	}
	if _, ok := s.Get("new", "fs", dir); ok {
		t.Fatal("usage after Close")
	}
}

func TestDiskUsageStops(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	if _, _, err := DiskUsage(stop, t.TempDir()); !errors.Is(err, ErrStopped) {
		t.Fatalf("DiskUsage after stop = %v, want ErrStopped", err)
	}
	if _, _, err := DiskUsage(make(chan struct{}), filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("DiskUsage of a missing path succeeded")
	}
}

// TestForgetOneTargetKeepsTheOthers: a volume published at two targets; unpublishing one keeps the other's cached
// statistics (no new walk, no UNKNOWN answer).
func TestForgetOneTargetKeepsTheOthers(t *testing.T) {
	var calls atomic.Int32
	walk := func(<-chan struct{}, string) (int64, int64, error) { return int64(calls.Add(1)), 1, nil }
	s := New(Config{Walk: walk})
	defer s.Close()
	a, b := t.TempDir(), t.TempDir()
	eventually(t, "target a measured", func() bool { _, ok := s.Get("vol", "fs", a); return ok })
	eventually(t, "target b measured", func() bool { _, ok := s.Get("vol", "fs", b); return ok })
	s.Forget("vol", a)
	if _, ok := s.Get("vol", "fs", b); !ok {
		t.Fatal("unpublishing target a dropped target b's statistics")
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d walks, want 2 (one per target)", n)
	}
}
