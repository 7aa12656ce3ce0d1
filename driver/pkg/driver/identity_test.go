package driver

import (
	"context"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func TestIdentity(t *testing.T) {
	e := newEnv(t, envOpts{notReady: true})
	info, err := e.identity.GetPluginInfo(t.Context(), &csi.GetPluginInfoRequest{})
	if err != nil || info.GetName() != "efs.csi.aws.com" || info.GetVendorVersion() != "v9.9.9" {
		t.Fatalf("GetPluginInfo = %v, %v", info, err)
	}
	caps, err := e.identity.GetPluginCapabilities(t.Context(), &csi.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []csi.PluginCapability_Service_Type
	for _, c := range caps.GetCapabilities() {
		got = append(got, c.GetService().GetType())
	}
	if len(got) != 2 || got[0] != csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS || got[1] != csi.PluginCapability_Service_CONTROLLER_SERVICE {
		t.Fatalf("capabilities = %v", got)
	}
	// Probe is ready even before the AWS clients are installed (upstream: always OK; a liveness failure would
	// restart the plugin); CreateVolume waits for the clients within its deadline meanwhile (startup_test.go), and
	// Ready (the health check) says why it is not ready.
	probe, err := e.identity.Probe(t.Context(), &csi.ProbeRequest{})
	if err != nil || !probe.GetReady().GetValue() {
		t.Fatalf("Probe before init = %v, %v; want ready=true", probe, err)
	}
	if err := e.ctrl.Ready(t.Context()); err == nil {
		t.Fatal("controller health check passes before the AWS clients exist")
	}
	e.ctrl.SetClouds(newProvider(t, e.aws, e.metrics))
	if err := e.ctrl.Ready(t.Context()); err != nil {
		t.Fatalf("controller health check after init: %v", err)
	}
}

func TestIdentityNodeOnly(t *testing.T) {
	id := NewIdentity("v1", false)
	caps, _ := id.GetPluginCapabilities(t.Context(), &csi.GetPluginCapabilitiesRequest{})
	for _, c := range caps.GetCapabilities() {
		if c.GetService().GetType() == csi.PluginCapability_Service_CONTROLLER_SERVICE {
			t.Fatal("node-only identity advertises the controller service")
		}
	}
	probe, _ := id.Probe(t.Context(), &csi.ProbeRequest{})
	if !probe.GetReady().GetValue() {
		t.Fatal("node-only identity without checks is not ready")
	}
}

// TestListenTCP: a tcp://host:port endpoint (upstream accepts it) serves the CSI services.
func TestListenTCP(t *testing.T) {
	l, err := Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Services{Identity: NewIdentity("v1", false)}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, l) }()
	defer func() { cancel(); <-done }()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := csi.NewIdentityClient(conn).GetPluginInfo(t.Context(), &csi.GetPluginInfoRequest{})
	if err != nil || resp.GetName() != DriverName {
		t.Fatalf("GetPluginInfo over tcp = %v, %v", resp, err)
	}
}
