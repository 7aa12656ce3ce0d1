//go:build cluster

package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// efsStandInPackage is the data helper's host program (driver/test/standins/README.md): fakeaws over HTTPS with a
// test CA, mount targets on loopback behind real stunnel, and the NFS server stand-in over a backing store.
const efsStandInPackage = "./test/standins/efs-standin"

// testCADirEnv names the directory of the test CA that `go tool mage test` made for the cluster's driver image
// (its efs-utils.crt): efs-standin signs its mount targets' certificates with it, so that stunnel in the driver
// verifies them as it verifies EFS's, with no mount option (testharness/pkg/clusterimages, TestCADirEnv).
const testCADirEnv = "AWS_EFS_CSI_TEST_CA_DIR"

// standInReady is the ready document efs-standin writes (its field names are a contract, efs-standin/ready.go).
type standInReady struct {
	PID                  int    `json:"pid"`
	Region               string `json:"region"`
	AWSEndpoint          string `json:"awsEndpoint"`
	ControlURL           string `json:"controlURL"`
	CAFile               string `json:"caFile"`
	BackingDir           string `json:"backingDir"`
	RegionalFileSystemID string `json:"regionalFileSystemID"`
	OneZoneFileSystemID  string `json:"oneZoneFileSystemID"`
	// NFSServer is where nfs-ganesha serves the backing store behind the mount targets.
	NFSServer string `json:"nfsServer"`
}

// startEFSStandIn builds and starts efs-standin in a directory of the test and waits for its ready document; it is
// stopped (SIGTERM: it takes off its mounts and stops stunnel) at the end of the test, after the cluster.
func startEFSStandIn(t *testing.T) *standInReady {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	root := filepath.Dir(strings.TrimSpace(string(out)))
	if err != nil || root == "." {
		t.Fatalf("locating the repository through go.work (go env GOWORK = %q): %v", out, err)
	}
	bin := filepath.Join(dir, "efs-standin")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, efsStandInPackage)
	build.Dir = filepath.Join(root, "driver")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building efs-standin: %v\n%s", err, b)
	}
	ready := filepath.Join(dir, "ready.json")
	logFile, err := os.Create(filepath.Join(dir, "efs-standin.log"))
	if err != nil {
		t.Fatal(err)
	}
	caDir := os.Getenv(testCADirEnv)
	if caDir == "" {
		t.Fatalf("%s is not set: run the suite with `go tool mage test` or `go tool mage cluster:stack`, which make the test CA the cluster's driver image carries", testCADirEnv)
	}
	cmd := exec.Command(bin, "--dir", filepath.Join(dir, "work"), "--ready-file", ready, "--region", region, "--ca-dir", caDir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// If the test process dies before its cleanup runs (killed while it waits for the cluster lock, say),
	// efs-standin must not outlive it: SIGTERM makes it take off its mounts and stop stunnel.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("efs-standin exited with %v; its log:\n%s", err, tail(filepath.Join(dir, "efs-standin.log"), 40))
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("efs-standin did not stop within 30 s of SIGTERM; killed")
		}
		if t.Failed() {
			t.Logf("efs-standin log:\n%s", tail(filepath.Join(dir, "efs-standin.log"), 40))
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, err := os.ReadFile(ready)
		if err == nil {
			var r standInReady
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("%s: %v", ready, err)
			}
			return &r
		}
		select {
		case err := <-exited:
			t.Fatalf("efs-standin exited before it was ready (%v):\n%s", err, tail(filepath.Join(dir, "efs-standin.log"), 40))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("efs-standin not ready after 2 min:\n%s", tail(filepath.Join(dir, "efs-standin.log"), 40))
		}
	}
}

// setFaults sets fakeaws faults while efs-standin runs, each a --fault spec ("*:latency=20ms"; "*:latency=0s"
// clears).
func (r *standInReady) setFaults(ctx context.Context, specs ...string) error {
	return r.post(ctx, "/faults", strings.Join(specs, "\n"))
}

// post sends body to the control endpoint's path and wants a 2xx answer.
func (r *standInReady) post(ctx context.Context, path, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.ControlURL+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST %s%s %q: %s %s", r.ControlURL, path, body, resp.Status, b)
	}
	return nil
}

// calls returns fakeaws' calls per operation so far ("*" is the total), from the control endpoint.
func (r *standInReady) calls(ctx context.Context) (map[string]int, error) {
	return r.counts(ctx, "/calls")
}

// nfsConnections returns how many NFS connections of each file system reached the real NFS server behind the
// mount targets (nfs-ganesha) so far: the mount.nfs4 stand-in lists every directory over NFS through efs-utils'
// relay before it mounts it.
func (r *standInReady) nfsConnections(ctx context.Context) (map[string]int, error) {
	return r.counts(ctx, "/nfs-connections")
}

// counts reads a map of counts from the control endpoint's path.
func (r *standInReady) counts(ctx context.Context, path string) (map[string]int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.ControlURL+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s%s: %s: %s", r.ControlURL, path, resp.Status, b)
	}
	var counts map[string]int
	if err := json.Unmarshal(b, &counts); err != nil {
		return nil, fmt.Errorf("GET %s%s: %w: %s", r.ControlURL, path, err, b)
	}
	return counts, nil
}

// tail is the last lines of a file, or why it cannot be read.
func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "(no " + path + ")"
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
