package main

import (
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/standintest"
)

var healthLog = regexp.MustCompile(`"Serving health checks" address="([^"]+)"`)

// TestAgainstTheDriver runs the stand-in against the real driver in node mode: it serves only once the driver
// answers, /healthz follows the driver's Probe (200 while it serves, 500 once it stopped, 200 after a restart),
// and SIGTERM ends it with 0, also while it still waits for a driver.
func TestAgainstTheDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the driver and the stand-in")
	}
	node, start := standintest.Driver(t)
	bin := standintest.Build(t, name)

	t.Run("SIGTERM while waiting for a driver that never comes exits 0", func(t *testing.T) {
		p := standintest.Start(t, bin, "--csi-address="+t.TempDir()+"/csi.sock", "--http-endpoint=127.0.0.1:0", "--v=5")
		p.WaitLog(t, standintest.ConnectingLog) // it waits for the driver now
		p.Signal(t, syscall.SIGTERM)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code after SIGTERM = %d, want 0", code)
		}
	})

	p := standintest.Start(t, bin, "--csi-address="+node.Socket, "--http-endpoint=127.0.0.1:0", "--probe-timeout=1s", "--v=5")
	p.WaitLog(t, standintest.ConnectingLog)
	time.Sleep(standintest.RedialBound) // bounded: see RedialBound
	if healthLog.MatchString(p.Logs()) || p.Exited() {
		t.Fatalf("before the driver runs the stand-in must wait, neither serve nor exit (exited: %v)", p.Exited())
	}
	drv := start()
	healthz := "http://" + p.WaitLog(t, healthLog)[1] + "/healthz"
	if code, body := standintest.Get(t, healthz); code != http.StatusOK || body != "ok" {
		t.Fatalf("GET /healthz while the driver serves = %d %q, want 200 ok", code, body)
	}

	drv.Stop()
	if code, body := standintest.Get(t, healthz); code != http.StatusInternalServerError || !strings.Contains(body, "connect to the CSI driver at "+node.Socket) {
		t.Fatalf("GET /healthz after the driver stopped = %d %q, want 500 naming the driver socket", code, body)
	}

	start()
	if code, body := standintest.Get(t, healthz); code != http.StatusOK || body != "ok" {
		t.Fatalf("GET /healthz after the driver restarted = %d %q, want 200 ok", code, body)
	}

	p.Signal(t, syscall.SIGTERM)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d, want 0", code)
	}
}
