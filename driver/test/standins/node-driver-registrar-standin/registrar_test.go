package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/standintest"
)

// hostSocket is the driver socket's path on the host in the operator's node DaemonSet.
const hostSocket = "/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock"

var healthLog = regexp.MustCompile(`"Serving health checks" address="([^"]+)"`)

// TestAgainstTheDriver runs the stand-in against the real driver in node mode and plays the kubelet's plugin
// watcher on the registration socket.
func TestAgainstTheDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the driver and the stand-in")
	}
	node, start := standintest.Driver(t)
	start()
	bin := standintest.Build(t, name)

	t.Run("SIGTERM while waiting for the driver exits 0", func(t *testing.T) {
		p := standintest.Start(t, bin, "--csi-address="+filepath.Join(t.TempDir(), "csi.sock"),
			"--kubelet-registration-path="+hostSocket, "--plugin-registration-path="+t.TempDir(), "--v=5")
		p.WaitLog(t, standintest.ConnectingLog) // it waits for the driver now
		p.Signal(t, syscall.SIGTERM)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code after SIGTERM = %d, want 0", code)
		}
	})

	t.Run("registers, serves healthz, removes its socket on SIGTERM", func(t *testing.T) {
		regDir := t.TempDir()
		p := standintest.Start(t, bin, "--csi-address="+node.Socket, "--kubelet-registration-path="+hostSocket,
			"--plugin-registration-path="+regDir, "--http-endpoint=127.0.0.1:0", "--v=5")
		healthz := "http://" + p.WaitLog(t, healthLog)[1] + "/healthz"
		socket := filepath.Join(regDir, "efs.csi.aws.com-reg.sock")
		fi, err := os.Stat(socket)
		if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("registration socket %s: %v %v; want a socket only its owner can use", socket, fi.Mode(), err)
		}

		kubelet := registerapi.NewRegistrationClient(dial(t, socket))
		info, err := kubelet.GetInfo(t.Context(), &registerapi.InfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		want := &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: standintest.DriverName, Endpoint: hostSocket,
			SupportedVersions: []string{"1.0.0"}}
		if !proto.Equal(info, want) {
			t.Fatalf("GetInfo = %v, want %v", info, want)
		}
		if _, err := kubelet.NotifyRegistrationStatus(t.Context(), &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
			t.Fatal(err)
		}
		if code, body := standintest.Get(t, healthz); code != http.StatusOK || body != "ok" {
			t.Fatalf("GET /healthz after registration = %d %q, want 200 ok", code, body)
		}
		if p.Exited() {
			t.Fatal("the stand-in exited after a successful registration")
		}

		p.Signal(t, syscall.SIGTERM)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code after SIGTERM = %d, want 0", code)
		}
		if _, err := os.Lstat(socket); !os.IsNotExist(err) {
			t.Fatalf("registration socket still there after SIGTERM: %v", err)
		}
	})

	t.Run("healthz is 404 once the preStop hook removed the socket", func(t *testing.T) {
		regDir := t.TempDir()
		p := standintest.Start(t, bin, "--csi-address="+node.Socket, "--kubelet-registration-path="+hostSocket,
			"--plugin-registration-path="+regDir, "--http-endpoint=127.0.0.1:0")
		healthz := "http://" + p.WaitLog(t, healthLog)[1] + "/healthz"
		if err := os.Remove(filepath.Join(regDir, "efs.csi.aws.com-reg.sock")); err != nil {
			t.Fatal(err)
		}
		if code, body := standintest.Get(t, healthz); code != http.StatusNotFound || !strings.Contains(body, "does not exist") {
			t.Fatalf("GET /healthz without the registration socket = %d %q, want 404 naming the missing socket", code, body)
		}
		p.Signal(t, syscall.SIGTERM)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code after SIGTERM = %d, want 0", code)
		}
	})

	t.Run("replaces a stale socket and exits 1 when the kubelet fails to register", func(t *testing.T) {
		regDir := t.TempDir()
		socket := filepath.Join(regDir, "efs.csi.aws.com-reg.sock")
		if err := listenStale(socket); err != nil {
			t.Fatal(err)
		}
		p := standintest.Start(t, bin, "--csi-address=unix://"+node.Socket, "--kubelet-registration-path="+hostSocket,
			"--plugin-registration-path="+regDir)
		p.WaitLog(t, regexp.MustCompile(`"Serving the kubelet plugin-registration API"`))
		kubelet := registerapi.NewRegistrationClient(dial(t, socket))
		if _, err := kubelet.GetInfo(t.Context(), &registerapi.InfoRequest{}); err != nil {
			t.Fatalf("GetInfo on the replaced socket: %v", err)
		}
		const reason = "RegisterPlugin error -- plugin efs.csi.aws.com: no supported version"
		if _, err := kubelet.NotifyRegistrationStatus(t.Context(), &registerapi.RegistrationStatus{PluginRegistered: false, Error: reason}); err != nil {
			t.Fatalf("NotifyRegistrationStatus(false): %v; want the call answered before the stand-in exits", err)
		}
		if code := p.Wait(t); code != 1 {
			t.Fatalf("exit code after a failed registration = %d, want 1", code)
		}
		if !strings.Contains(p.Logs(), reason) {
			t.Errorf("the log does not quote the kubelet's error %q", reason)
		}
		if _, err := os.Lstat(socket); !os.IsNotExist(err) {
			t.Fatalf("registration socket still there after the exit: %v", err)
		}
	})
}

// dial connects to a unix socket as the kubelet's plugin watcher does.
func dial(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// listenStale leaves a socket file at path with nothing listening, as a killed registrar does.
func listenStale(path string) error {
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	return l.Close()
}
