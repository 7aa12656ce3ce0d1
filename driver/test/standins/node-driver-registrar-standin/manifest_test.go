package main

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/standintest"
)

// TestOperatorNodeDaemonSetArgs parses the args of the operator's csi-node-driver-registrar container with this
// stand-in: every flag must be one it implements (nothing ignored), the registration socket it creates must be
// the one the container's preStop hook removes, and /healthz must listen on the port the container's liveness
// probe asks. A flag added, renamed or misspelled in operator/assets/driver/node.yaml fails here.
func TestOperatorNodeDaemonSetArgs(t *testing.T) {
	spec := standintest.PodSpec(t, "node.yaml")
	c := standintest.Container(t, spec, "csi-node-driver-registrar")
	opts, ignored, err := parseOptions(c.Args)
	if err != nil {
		t.Fatalf("the stand-in refuses node.yaml's registrar args %q: %v", c.Args, err)
	}
	if len(ignored) != 0 {
		t.Errorf("node.yaml gives the registrar flags this stand-in ignores: %q", ignored)
	}

	socket := opts.socketPath(standintest.DriverName)
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		t.Fatal("csi-node-driver-registrar has no preStop exec hook")
	}
	if hook := strings.Join(c.Lifecycle.PreStop.Exec.Command, " "); !strings.Contains(hook, socket+" ") && !strings.HasSuffix(hook, socket) {
		t.Errorf("preStop hook %q does not remove the registration socket %s", hook, socket)
	}

	_, port, err := net.SplitHostPort(opts.healthAddress())
	if err != nil {
		t.Fatalf("health address %q: %v", opts.healthAddress(), err)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Fatalf("csi-node-driver-registrar liveness probe %+v: want GET /healthz", c.LivenessProbe)
	}
	probePort := c.LivenessProbe.HTTPGet.Port.String()
	for _, p := range c.Ports {
		if p.Name == probePort {
			probePort = strconv.Itoa(int(p.ContainerPort))
		}
	}
	if probePort != port {
		t.Errorf("the liveness probe asks port %s, the stand-in serves /healthz on %s", probePort, opts.healthAddress())
	}
}
