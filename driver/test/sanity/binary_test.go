package sanity

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/onsi/ginkgo/v2/types"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// csiSanityVersion is the csi-test release whose csi-sanity binary the acceptance names.
const csiSanityVersion = "v5.6.0"

// TestCSISanityBinary builds the driver and the standalone csi-sanity, starts fakeaws and two driver processes as
// deployed: one in controller mode (region and zone from fakeaws' instance metadata) at --csi.controllerendpoint
// and one in node mode at --csi.endpoint, and runs csi-sanity against them with default StorageClass parameters
// (so its 128-character names exercise the long-name path). Node specs that mount are skipped here (this kernel
// has no NFS client; test/e2e/sanity runs them with real mounts as root); csi-sanity's cleanup still calls the
// node process.
func TestCSISanityBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds two binaries")
	}
	root := moduleRoot(t)
	sanityBin := buildCSISanity(t, filepath.Join(filepath.Dir(root), "_output", "tools", "csi-sanity-"+csiSanityVersion))
	work := t.TempDir()
	driverBin := filepath.Join(work, "aws-efs-csi-driver")
	goCmd(t, root, nil, "build", "-o", driverBin, "./cmd/aws-efs-csi-driver")

	s, err := fakeaws.Start(fakeaws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fsID := s.AddFileSystem(fakeaws.FileSystem{})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	env := append(os.Environ(), "AWS_ENDPOINT_URL="+s.URL(), "AWS_EC2_METADATA_SERVICE_ENDPOINT="+s.URL(),
		"AWS_ACCESS_KEY_ID=AKIAFAKEAWSBINARY001", "AWS_SECRET_ACCESS_KEY=fake-secret", "AWS_REGION=", "AWS_DEFAULT_REGION=",
		"CSI_NODE_NAME=", "KUBERNETES_SERVICE_HOST=")
	var ctrlLogs, nodeLogs harness.SyncBuffer
	ctrlSock := filepath.Join(work, "controller.sock")
	startProcess(ctx, t, driverBin, env, &ctrlLogs, "--mode=controller", "--endpoint=unix://"+ctrlSock, "--v=4")
	nodeSock := filepath.Join(work, "node.sock")
	startProcess(ctx, t, driverBin, env, &nodeLogs, append([]string{"--mode=node", "--endpoint=unix://" + nodeSock, "--v=4"}, nodeArgs(t, work)...)...)
	defer func() {
		cancel()
		if t.Failed() {
			t.Logf("controller log:\n%s\nnode log:\n%s", harness.Tail(ctrlLogs.String(), 6000), harness.Tail(nodeLogs.String(), 6000))
		}
	}()
	waitReady(t, csi.NewControllerClient(dial(t, ctrlSock)), fsID)
	waitNode(t, csi.NewNodeClient(dial(t, nodeSock)))

	params := filepath.Join(work, "params.yaml")
	if err := os.WriteFile(params, []byte("provisioningMode: efs-ap\nfileSystemId: "+fsID+"\ndirectoryPerms: \"700\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reportFile := filepath.Join(work, "report.json")
	out, err := exec.CommandContext(ctx, sanityBin, "--csi.endpoint=unix://"+nodeSock, "--csi.controllerendpoint=unix://"+ctrlSock,
		"--csi.testvolumeparameters="+params, "--csi.mountdir="+filepath.Join(work, "mnt"), "--csi.stagingdir="+filepath.Join(work, "stage"),
		"--ginkgo.skip="+nodeSpecs, "--ginkgo.json-report="+reportFile, "--ginkgo.no-color").CombinedOutput()
	if err != nil {
		t.Fatalf("csi-sanity failed: %v\n%s", err, harness.Tail(string(out), 4000))
	}
	var reports []types.Report
	b, err := os.ReadFile(reportFile)
	if err != nil || json.Unmarshal(b, &reports) != nil || len(reports) != 1 {
		t.Fatalf("read csi-sanity report: %v", err)
	}
	c := countSpecs(reports[0])
	t.Logf("csi-sanity %s binary: %d passed, %d failed, %d node specs skipped, %d skipped by the suite, %d pending",
		csiSanityVersion, c.passed, c.failed, c.nodeSkipped, c.otherSkipped, c.pending)
	if c.failed != 0 || c.passed < 18 {
		t.Fatalf("csi-sanity binary: %d passed, %d failed; want all 18 identity and controller specs to pass", c.passed, c.failed)
	}
	if !strings.Contains(ctrlLogs.String(), `source="imds"`) {
		t.Errorf("driver did not take region and zone from instance metadata")
	}
}

// startProcess runs the driver binary until ctx ends (SIGINT, then wait).
func startProcess(ctx context.Context, t *testing.T, bin string, env []string, logs *harness.SyncBuffer, args ...string) {
	t.Helper()
	proc := exec.CommandContext(ctx, bin, args...)
	proc.Env = env
	proc.Stdout, proc.Stderr = logs, logs
	proc.Cancel = func() error { return proc.Process.Signal(os.Interrupt) }
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Wait() })
}

// nodeArgs points the node process's efs-utils and record paths into dir and supervises a stand-in watchdog.
func nodeArgs(t *testing.T, dir string) []string {
	t.Helper()
	watchdog := filepath.Join(dir, "watchdog")
	if err := os.WriteFile(watchdog, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{
		"--efs-utils-config-dir-path=" + filepath.Join(dir, "var-amazon-efs"), "--efs-utils-config-legacy-dir-path=" + filepath.Join(dir, "legacy"),
		"--efs-utils-static-files-path=" + filepath.Join(dir, "static"), "--efs-utils-config-link-path=" + filepath.Join(dir, "etc-amazon-efs"),
		"--efs-utils-state-dir=" + filepath.Join(dir, "run-efs"), "--efs-utils-watchdog-path=" + watchdog,
		"--publish-records-dir=" + filepath.Join(dir, "records"),
	}
}

// waitNode waits until the node process knows its identity (NodeGetInfo answers).
func waitNode(t *testing.T, n csi.NodeClient) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := n.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
		cancel()
		if err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("node process did not serve NodeGetInfo within 30s")
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// buildCSISanity builds csi-sanity through a throwaway module (go install of the command works too, but this
// keeps the version pinned without touching the driver's go.mod), cached in dir.
func buildCSISanity(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "csi-sanity")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod := fmt.Sprintf("module csisanitybuild\n\ngo 1.24\n\nrequire github.com/kubernetes-csi/csi-test/v5 %s\n", csiSanityVersion)
	tools := "//go:build tools\n\npackage tools\n\nimport _ \"github.com/kubernetes-csi/csi-test/v5/cmd/csi-sanity\"\n"
	for name, content := range map[string]string{"go.mod": gomod, "tools.go": tools} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
	goCmd(t, dir, env, "mod", "tidy")
	goCmd(t, dir, env, "build", "-o", bin+".tmp", "github.com/kubernetes-csi/csi-test/v5/cmd/csi-sanity")
	if err := os.Rename(bin+".tmp", bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func goCmd(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

func dial(t *testing.T, sock string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// waitReady waits until the controller serves: its AWS initialisation runs after the socket opens, and Probe is
// ready throughout, so it polls a DeleteVolume of an access point that does not exist (success once AWS answers).
func waitReady(t *testing.T, c csi.ControllerClient, fsID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := c.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: fsID + "::fsap-0123456789abcdef0"})
		cancel()
		if err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("driver did not become ready within 30s")
}
