package localcluster

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// cniBinDir is where Debian's containernetworking-plugins installs the plugins.
const cniBinDir = "/usr/lib/cni"

// pickSubnet returns a /24 in 10.200.0.0/16 that no interface address of this machine falls in.
func pickSubnet(seed int) (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for i := range 256 {
		third := (seed + i) % 256
		_, subnet, _ := net.ParseCIDR(fmt.Sprintf("10.200.%d.0/24", third))
		if !overlaps(subnet, addrs) {
			return subnet.String(), nil
		}
	}
	return "", fmt.Errorf("every /24 of 10.200.0.0/16 is in use on this machine")
}

func overlaps(subnet *net.IPNet, addrs []net.Addr) bool {
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if ok && (subnet.Contains(n.IP) || n.Contains(subnet.IP)) {
			return true
		}
	}
	return false
}

// writeCNIConfig writes the pod network: a bridge of its own with host-local addresses from subnet, IPAM state
// under dir, no masquerading and no port mapping (so no iptables rules), and loopback. Pods route the Service
// range through the bridge's address (where kube-proxy's and the harness's rules take it) and nothing else: the
// pod network reaches its pods, the host's addresses and Services, not other networks.
func writeCNIConfig(confDir, ipamDir string, s *state) error {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       s.Network,
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": s.Bridge, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": s.Subnet}}},
					"routes":  []map[string]string{{"dst": cluster.ServiceCIDR}},
					"dataDir": ipamDir,
				},
			},
			map[string]any{"type": "loopback"},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(confDir, "10-"+s.Network+".conflist"), b, 0o644)
}

// cniCacheEntries are the files libcni keeps in /var/lib/cni for the network's attachments.
func cniCacheEntries(network string) []string {
	var out []string
	for _, dir := range []string{"/var/lib/cni/results", "/var/lib/cni/cache/results"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), network+"-") {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}
