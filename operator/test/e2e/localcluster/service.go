package localcluster

import (
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
)

// kubernetesServiceIP is the kubernetes Service's address, the first of cluster.ServiceCIDR; in-cluster clients
// (client-go's InClusterConfig) connect to it on port 443.
const kubernetesServiceIP = "10.0.0.1"

// addServiceRule does for the kubernetes Service the one thing kube-proxy would do that host-network pods (the
// driver's controller and node pods) need: a nat OUTPUT rule sends 10.0.0.1:443 to the API server on
// 127.0.0.1. The rule carries the cluster's comment, by which teardown removes it.
func addServiceRule(s *state, apiServer string) error {
	u, err := url.Parse(apiServer)
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return fmt.Errorf("API server address %q: %w", apiServer, err)
	}
	args := append([]string{"-w", "-t", "nat", "-A"}, serviceRule(s.RuleComment, u.Host)...)
	if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func serviceRule(comment, target string) []string {
	return []string{"OUTPUT", "-d", kubernetesServiceIP + "/32", "-p", "tcp", "--dport", "443",
		"-m", "comment", "--comment", comment, "-j", "DNAT", "--to-destination", target}
}

// removeServiceRules deletes every nat rule carrying comment.
func removeServiceRules(comment string) error {
	out, err := exec.Command("iptables", "-w", "-t", "nat", "-S").Output()
	if err != nil {
		return fmt.Errorf("iptables -t nat -S: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "-A ") || !strings.Contains(line, "--comment "+comment+" ") {
			continue
		}
		args := append([]string{"-w", "-t", "nat", "-D"}, strings.Fields(strings.TrimPrefix(line, "-A "))...)
		if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
