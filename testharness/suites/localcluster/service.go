package localcluster

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
)

// kubernetesServiceIP is the kubernetes Service's address, the first of cluster.ServiceCIDR; in-cluster clients
// (client-go's InClusterConfig) connect to it on port 443.
const kubernetesServiceIP = "10.0.0.1"

// The kubernetes Service is the one Service kube-proxy cannot serve here. kube-proxy sends a Service's traffic
// to the addresses of its EndpointSlices, and the API server, which listens on 127.0.0.1 only, cannot publish
// that address: Endpoints and EndpointSlice validation refuse loopback addresses ("may not be in the loopback
// range"), so the Service has no endpoints and kube-proxy only installs a REJECT for it in the filter table.
// The harness therefore sends 10.0.0.1:443 to the API server itself, with nat rules evaluated before that
// REJECT (nat precedes filter on every hook):
//   - OUTPUT, for the host and host-network pods (the driver's);
//   - PREROUTING on the pod network's bridge, for pods. A packet that arrives on an interface other than lo
//     with a 127.0.0.0/8 destination is dropped as a martian unless that interface has route_localnet set; the
//     harness creates the bridge before CNI does so that it can set route_localnet on it alone (kube-proxy's
//     own way, localhostNodePorts, sets it for every interface of the machine). No masquerading is needed:
//     the API server answers the pod's own address through the bridge (route_localnet also allows the 127.0.0.1
//     source on the way out) and conntrack restores 10.0.0.1 as the source.
//   - an INPUT rule that drops anything else from the bridge to 127.0.0.0/8 (connections that were not
//     DNATed): route_localnet would otherwise let pods reach every loopback-only server of the machine, etcd
//     included, which is the hole kube-proxy closes the same way for localhost NodePorts (CVE-2020-8558).
//
// Every rule carries the cluster's comment, by which teardown removes them.
func addServiceRules(s *state, apiServer string) error {
	u, err := url.Parse(apiServer)
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return fmt.Errorf("API server address %q: %w", apiServer, err)
	}
	for _, r := range serviceRules(s.RuleComment, s.Bridge, u.Host) {
		args := append([]string{"-w", "-t", r.table, "-A", r.chain}, r.spec...)
		if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// rule is an iptables rule: its table, chain and specification.
type rule struct {
	table, chain string
	spec         []string
}

// serviceRules are the harness's iptables rules (see addServiceRules).
func serviceRules(comment, bridge, target string) []rule {
	service := []string{"-d", kubernetesServiceIP + "/32", "-p", "tcp", "--dport", "443", "-m", "comment", "--comment", comment}
	dnat := []string{"-j", "DNAT", "--to-destination", target}
	return []rule{
		{"nat", "OUTPUT", concat(service, dnat)},
		{"nat", "PREROUTING", concat([]string{"-i", bridge}, service, dnat)},
		{"filter", "INPUT", []string{"-i", bridge, "-d", "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate", "DNAT",
			"-m", "comment", "--comment", comment, "-j", "DROP"}},
	}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// createBridge creates the pod network's bridge (the CNI bridge plugin adopts an existing bridge of its name and
// gives it the gateway address) with route_localnet set on it alone; see addServiceRules.
func createBridge(bridge string) error {
	for _, args := range [][]string{{"link", "add", "name", bridge, "type", "bridge"}, {"link", "set", bridge, "up"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return os.WriteFile("/proc/sys/net/ipv4/conf/"+bridge+"/route_localnet", []byte("1"), 0o644)
}

// removeServiceRules deletes every rule carrying comment, in the tables serviceRules uses.
func removeServiceRules(comment string) error {
	for _, table := range []string{"nat", "filter"} {
		out, err := exec.Command("iptables", "-w", "-t", table, "-S").Output()
		if err != nil {
			return fmt.Errorf("iptables -t %s -S: %w", table, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "-A ") || !strings.Contains(line, "--comment "+comment+" ") {
				continue
			}
			args := append([]string{"-w", "-t", table, "-D"}, strings.Fields(strings.TrimPrefix(line, "-A "))...)
			if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, out)
			}
		}
	}
	return nil
}
