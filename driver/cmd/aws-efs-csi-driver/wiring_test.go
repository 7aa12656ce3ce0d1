package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// start runs the driver in-process with args until the test ends, against fakeaws for AWS and instance metadata.
func start(t *testing.T, s *fakeaws.Server, args ...string) *grpc.ClientConn {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL", s.URL())
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", s.URL())
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEAWSWIRING001")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	sock := filepath.Join(t.TempDir(), "csi.sock")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"--endpoint=unix://" + sock}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("driver exit code %d after shutdown, want 0", code)
		}
	})
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

// probeUntilReady checks that Probe is ready as soon as the socket answers: it never waits for dependencies.
func probeUntilReady(t *testing.T, id csi.IdentityClient) {
	t.Helper()
	var resp *csi.ProbeResponse
	var err error
	for range 400 { // the socket may not be open yet
		if resp, err = id.Probe(t.Context(), &csi.ProbeRequest{}); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err != nil || !resp.GetReady().GetValue() {
		t.Fatalf("Probe = %v, %v; want ready as soon as the process serves", resp, err)
	}
}

// waitServing waits until the mode's services work: NodeGetInfo answers (node identity known), or a DeleteVolume
// of a made-up access point succeeds (AWS clients installed).
func waitServing(t *testing.T, conn *grpc.ClientConn, node bool) {
	t.Helper()
	for range 400 {
		var err error
		if node {
			_, err = csi.NewNodeClient(conn).NodeGetInfo(t.Context(), &csi.NodeGetInfoRequest{})
		} else {
			_, err = csi.NewControllerClient(conn).DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: "fs-0123456789abcdef0::fsap-0123456789abcdef0"})
		}
		if err == nil {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("driver never started serving")
}

func TestNodeModeServesNodeAndIdentityOnlyAndCallsNoAWSAPI(t *testing.T) {
	s, err := fakeaws.Start(fakeaws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn := start(t, s, append([]string{"--mode=node"}, nodeTestArgs(t)...)...)
	id := csi.NewIdentityClient(conn)
	probeUntilReady(t, id)
	waitServing(t, conn, true)
	info, err := csi.NewNodeClient(conn).NodeGetInfo(t.Context(), &csi.NodeGetInfoRequest{})
	if err != nil || info.GetNodeId() != "i-0123456789abcdef0" {
		t.Errorf("NodeGetInfo = %v, %v; want the instance ID from instance metadata", info, err)
	}
	caps, err := id.GetPluginCapabilities(t.Context(), &csi.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps.GetCapabilities() {
		if c.GetService().GetType() == csi.PluginCapability_Service_CONTROLLER_SERVICE {
			t.Error("node mode advertises the controller service")
		}
	}
	_, err = csi.NewControllerClient(conn).ControllerGetCapabilities(t.Context(), &csi.ControllerGetCapabilitiesRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("controller service in node mode: %v, want Unimplemented", err)
	}
	for api, n := range s.CallCounts() {
		if api != "GetMetadata" && api != "GetMetadataToken" && n != 0 { // the node reads instance metadata only
			t.Errorf("node mode called %s %d times: %v", api, n, s.CallCounts())
		}
	}
}

func TestControllerModeMetricsAndRegionFromFlags(t *testing.T) {
	s, err := fakeaws.Start(fakeaws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fsID := s.AddFileSystem(fakeaws.FileSystem{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	conn := start(t, s, "--mode=controller", "--region=us-east-1", "--availability-zone=us-east-1a", "--http-endpoint="+addr,
		"--tags=team:storage")
	probeUntilReady(t, csi.NewIdentityClient(conn))
	waitServing(t, conn, false)
	_, err = csi.NewControllerClient(conn).CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "pvc-1",
		Parameters: map[string]string{"provisioningMode": "efs-ap", "fileSystemId": fsID, "directoryPerms": "700"},
		VolumeCapabilities: []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Calls("GetMetadata") + s.Calls("GetMetadataToken"); n != 0 {
		t.Errorf("%d metadata calls although --region and --availability-zone were given", n)
	}
	if aps := s.AccessPoints(fsID); len(aps) != 1 || !hasTag(aps[0], "team", "storage") {
		t.Errorf("access points %+v, want one tagged team=storage", aps)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/metrics", addr))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`aws_efs_csi_api_request_duration_seconds_count{request="CreateAccessPoint",service="efs"} 1`,
		`aws_efs_csi_rpc_duration_seconds_count{code="OK",method="/csi.v1.Controller/CreateVolume"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func hasTag(ap fakeaws.AccessPoint, k, v string) bool {
	for _, tag := range ap.Tags {
		if tag.Key == k && tag.Value == v {
			return true
		}
	}
	return false
}

// TestLivenessIgnoresBrokenWatchdog: with an efs-utils watchdog that cannot start, Probe (what the livenessprobe
// sidecar asks) stays ready, so the node plugin and its TLS relays are not restarted; the failure shows in the
// aws_efs_csi_dependency_healthy metric (and the log).
func TestLivenessIgnoresBrokenWatchdog(t *testing.T) {
	s, err := fakeaws.Start(fakeaws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	args := append([]string{"--mode=node", "--http-endpoint=" + addr}, nodeTestArgs(t)...)
	args = append(args, "--efs-utils-watchdog-path="+filepath.Join(t.TempDir(), "missing-watchdog"))
	conn := start(t, s, args...)
	probeUntilReady(t, csi.NewIdentityClient(conn))
	waitServing(t, conn, true)
	want := `aws_efs_csi_dependency_healthy{dependency="efs_utils_watchdog"} 0`
	var body []byte
	for range 400 {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), want) && strings.Contains(string(body), `aws_efs_csi_dependency_healthy{dependency="node_identity"} 1`) {
				break
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	if !strings.Contains(string(body), want) || !strings.Contains(string(body), `aws_efs_csi_dependency_healthy{dependency="node_identity"} 1`) {
		t.Fatalf("metrics lack %s and node_identity 1:\n%s", want, body)
	}
	resp, err := csi.NewIdentityClient(conn).Probe(t.Context(), &csi.ProbeRequest{})
	if err != nil || !resp.GetReady().GetValue() {
		t.Fatalf("Probe with a broken watchdog = %v, %v; want ready", resp, err)
	}
}
