package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

type identity struct {
	csi.UnimplementedIdentityServer
}

func (identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: "efs.csi.aws.com", VendorVersion: "test"}, nil
}

func serveIdentity(t *testing.T, socket string) {
	t.Helper()
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	csi.RegisterIdentityServer(srv, identity{})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
}

// The kubelet's side of registration: GetInfo names the driver and its node socket; a failed registration ends
// the registrar (so that the kubelet restarts it), and the socket is removed.
func TestRegistrationAsTheKubeletSeesIt(t *testing.T) {
	dir := t.TempDir()
	csiSocket := filepath.Join(dir, "csi.sock")
	serveIdentity(t, csiSocket)
	regDir := filepath.Join(dir, "registration")
	if err := os.Mkdir(regDir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := options{csiAddress: csiSocket, kubeletRegistrationPath: "/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock", pluginRegistrationPath: regDir}
	done := make(chan error, 1)
	go func() { done <- run(t.Context(), o) }()
	regSocket := filepath.Join(regDir, "efs.csi.aws.com-reg.sock")
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(regSocket); err != nil; _, err = os.Stat(regSocket) {
		if time.Now().After(deadline) {
			t.Fatalf("no registration socket %s: %v", regSocket, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	conn, err := grpc.NewClient("unix://"+regSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := registerapi.NewRegistrationClient(conn)
	info, err := reg.GetInfo(t.Context(), &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registerapi.CSIPlugin || info.Name != "efs.csi.aws.com" || info.Endpoint != o.kubeletRegistrationPath || len(info.SupportedVersions) == 0 {
		t.Fatalf("GetInfo = %+v", info)
	}
	if _, err := reg.NotifyRegistrationStatus(t.Context(), &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("run ended after a successful registration: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	// The registrar may end before it answers, as node-driver-registrar does (it exits in the call).
	_, _ = reg.NotifyRegistrationStatus(t.Context(), &registerapi.RegistrationStatus{PluginRegistered: false, Error: "boom"})
	if err := <-done; err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("run after a failed registration = %v; want an error carrying the kubelet's", err)
	}
	if _, err := os.Stat(regSocket); !os.IsNotExist(err) {
		t.Fatalf("registration socket left behind: %v", err)
	}
}

func TestHealthzFollowsTheSocket(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "x-reg.sock")
	srv := httptest.NewServer(healthz(socket))
	defer srv.Close()
	get := func() int {
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusInternalServerError {
		t.Fatalf("/healthz without the socket = %d; want 500", code)
	}
	if err := os.WriteFile(socket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("/healthz with the socket = %d; want 200", code)
	}
}
