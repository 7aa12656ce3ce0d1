package main

import (
	"net"
	"strconv"
	"testing"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/standintest"
)

// TestOperatorManifestArgs parses the args of the operator's csi-liveness-probe containers with this stand-in:
// every flag must be one it implements (nothing ignored), and /healthz must listen on the port that the csi-driver
// container's liveness probe asks. A flag added, renamed or misspelled in operator/assets/driver fails here.
func TestOperatorManifestArgs(t *testing.T) {
	for _, asset := range []string{"controller.yaml", "node.yaml"} {
		t.Run(asset, func(t *testing.T) {
			spec := standintest.PodSpec(t, asset)
			c := standintest.Container(t, spec, "csi-liveness-probe")
			opts, ignored, err := parseOptions(c.Args)
			if err != nil {
				t.Fatalf("the stand-in refuses %s's csi-liveness-probe args %q: %v", asset, c.Args, err)
			}
			if len(ignored) != 0 {
				t.Errorf("%s gives csi-liveness-probe flags this stand-in ignores: %q", asset, ignored)
			}
			drv := standintest.Container(t, spec, "csi-driver")
			if drv.LivenessProbe == nil || drv.LivenessProbe.HTTPGet == nil || drv.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Fatalf("csi-driver liveness probe %+v: want GET /healthz", drv.LivenessProbe)
			}
			probePort := drv.LivenessProbe.HTTPGet.Port.String()
			for _, p := range drv.Ports {
				if p.Name == probePort {
					probePort = strconv.Itoa(int(p.ContainerPort))
				}
			}
			host, port, err := net.SplitHostPort(opts.listenAddress())
			if err != nil {
				t.Fatalf("listen address %q: %v", opts.listenAddress(), err)
			}
			if port != probePort {
				t.Errorf("csi-driver's liveness probe asks port %s, the stand-in serves /healthz on %s", probePort, opts.listenAddress())
			}
			if probeHost := drv.LivenessProbe.HTTPGet.Host; probeHost != "" && host != "0.0.0.0" && host != probeHost {
				t.Errorf("csi-driver's liveness probe asks host %s, the stand-in listens on %s", probeHost, opts.listenAddress())
			}
		})
	}
}
