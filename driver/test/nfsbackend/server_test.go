package nfsbackend

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// request sends one request to the backend at addr, as the mount.nfs4 stand-in does through the relay.
func request(t *testing.T, addr string, req Request) Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return Response{}
	}
	defer c.Close()
	if err := WriteMessage(c, req); err != nil {
		t.Error(err)
	}
	var resp Response
	if err := ReadMessage(bufio.NewReader(c), &resp); err != nil {
		t.Error(err)
	}
	return resp
}

func isMountPoint(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return MountPoints(string(b))[path]
}

// TestServerConcurrentMounts (root): many mounts at once in this process's mount namespace each show the file
// system, each gets its table line, unmounted ones leave the table, and Close takes off the rest.
func TestServerConcurrentMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: bind mounts and setns; CI runs it as root")
	}
	dir := t.TempDir()
	s := &Server{BackingDir: filepath.Join(dir, "backing"), AccessPoints: func(string) (AccessPoint, bool) { return AccessPoint{}, false },
		SyncInterval: 50 * time.Millisecond}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = s.Close(t.Context())
		}
	})
	addr, err := s.Listen("fs-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "backing", "fs-1", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "run", "nfs4-mounts")
	const n = 16
	targets := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		targets[i] = filepath.Join(dir, "mnt", fmt.Sprint(i))
		if err := os.MkdirAll(targets[i], 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := request(t, addr, Request{Export: "/", Target: targets[i], Source: "127.0.0.1:/",
				Options: fmt.Sprintf("port=%d", 20000+i), MountNamespace: st.Ino, MountTable: table})
			if resp.Error != "" {
				t.Errorf("mount %d: %s", i, resp.Error)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, tg := range targets {
		if _, err := os.Stat(filepath.Join(tg, "f")); err != nil {
			t.Fatalf("%s does not show the file system: %v", tg, err)
		}
	}
	waitLines := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, _ := os.ReadFile(table)
			if got := strings.Count(string(b), "\n"); got == want {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("table has %d lines, want %d:\n%s", got, want, b)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitLines(n)
	for _, tg := range targets[:n/2] {
		if err := unix.Unmount(tg, 0); err != nil {
			t.Fatal(err)
		}
	}
	waitLines(n / 2)
	if got := s.Mounts()["fs-1"]; got != n {
		t.Fatalf("Mounts() = %d, want %d", got, n)
	}
	// a request without a valid namespace or for a missing path mounts nothing
	if resp := request(t, addr, Request{Export: "/none", Target: targets[0], MountNamespace: st.Ino}); !strings.Contains(resp.Error, "no such file") {
		t.Fatalf("missing export: %+v", resp)
	}
	if resp := request(t, addr, Request{Export: "/", Target: targets[0], MountNamespace: 1}); !strings.Contains(resp.Error, "mount namespace") {
		t.Fatalf("unknown namespace: %+v", resp)
	}
	if isMountPoint(t, targets[0]) {
		t.Fatal("a refused request mounted something")
	}
	closed = true
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if isMountPoint(t, tg) {
			t.Fatalf("%s still mounted after Close", tg)
		}
	}
	waitLines(0)
}
