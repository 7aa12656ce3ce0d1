package localcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// proxyPaths are kube-proxy's files: its configuration and kubeconfig, under the cluster's directory.
type proxyPaths struct{ Config, Kubeconfig string }

// writeProxyConfig writes kube-proxy's KubeProxyConfiguration. It programs Services in iptables mode, with
// every machine-wide setting it could change left alone, so that teardown has only its chains to remove:
//   - health and metrics on loopback ports of their own;
//   - conntrack sizes and timeouts 0 (kube-proxy then leaves the nf_conntrack sysctls as they are);
//   - localhostNodePorts false: otherwise it sets net.ipv4.conf.all.route_localnet=1 for the whole machine;
//   - NodePorts only on loopback addresses, which with localhostNodePorts false means none: nothing of the
//     cluster becomes reachable from another machine;
//   - traffic from the pod network (its bridge) is local, the rest masqueraded (DetectLocalMode BridgeInterface);
//   - oomScoreAdj 0: it would otherwise lower its own OOM score like a node agent of a real cluster.
func writeProxyConfig(p proxyPaths, s *state, healthzPort, metricsPort int) error {
	zero := int32(0)
	cfg := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"mode":               "iptables",
		"hostnameOverride":   s.Node,
		"bindAddress":        "127.0.0.1",
		"healthzBindAddress": "127.0.0.1:" + strconv.Itoa(healthzPort),
		"metricsBindAddress": "127.0.0.1:" + strconv.Itoa(metricsPort),
		"clientConnection":   map[string]any{"kubeconfig": p.Kubeconfig},
		"iptables":           map[string]any{"localhostNodePorts": false, "syncPeriod": "30s", "minSyncPeriod": "0s"},
		"conntrack": map[string]any{
			"maxPerCore": zero, "min": zero, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s",
			"udpTimeout": "0s", "udpStreamTimeout": "0s",
		},
		"nodePortAddresses": []string{"127.0.0.0/8"},
		"detectLocalMode":   "BridgeInterface",
		"detectLocal":       map[string]any{"bridgeInterface": s.Bridge},
		"clusterCIDR":       s.Subnet,
		"oomScoreAdj":       zero,
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.Config), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p.Config, b, 0o644)
}

// startProxy starts kube-proxy as system:kube-proxy (bound to system:node-proxier by the API server's default
// policy) and waits until it has programmed the Services once (its /healthz answers 200 only then).
func (c *Cluster) startProxy(ctx context.Context, bin string, launch cluster.LaunchOptions) error {
	s := c.state
	p := proxyPaths{
		Config:     filepath.Join(s.Dir, "kube-proxy", "config.json"),
		Kubeconfig: filepath.Join(s.Dir, "kube-proxy", "kubeconfig"),
	}
	if err := os.MkdirAll(filepath.Dir(p.Config), 0o755); err != nil {
		return err
	}
	if err := c.control.WriteKubeconfig(p.Kubeconfig, "system:kube-proxy"); err != nil {
		return err
	}
	ports, err := cluster.FreePorts(2)
	if err != nil {
		return err
	}
	if err := writeProxyConfig(p, s, ports[0], ports[1]); err != nil {
		return err
	}
	s.ProxyConfig = p.Config
	if err := s.save(); err != nil {
		return err
	}
	fmt.Fprintf(c.log, "localcluster: starting kube-proxy (iptables mode)\n")
	proxy, err := cluster.Launch("kube-proxy", bin, []string{"--config=" + p.Config, "--v=1"}, s.Dir, launch)
	if err != nil {
		return err
	}
	s.Processes = append(s.Processes, proxy)
	if err := s.save(); err != nil {
		return err
	}
	healthz := "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/healthz"
	client := &http.Client{Timeout: 2 * time.Second}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if gone, why := proxy.Exited(); gone {
			return false, fmt.Errorf("%s", why)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, healthz, nil)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("kube-proxy not healthy at %s (last: %s; log %s): %w", healthz, last, proxy.Log, err)
	}
	return nil
}

// cleanupProxy removes every iptables chain and rule kube-proxy made: `kube-proxy --cleanup` removes its own
// chains in every mode, but by design not KUBE-FIREWALL, a copy of the kubelet's chain that kube-proxy creates
// too and a real node's kubelet keeps; here the kubelet makes no chains (makeIPTablesUtilChains false) and Start
// refuses to run beside existing KUBE-* chains, so every KUBE-* chain left after the cleanup is removed as well,
// with the rules of the built-in chains that jump to it.
func cleanupProxy(s *state, bin string) error {
	if bin == "" {
		return nil
	}
	var errs []error
	args := []string{"--cleanup", "--v=1"}
	if s.ProxyConfig != "" {
		args = append(args, "--config="+s.ProxyConfig)
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w: %s", err, out))
	}
	for _, family := range []string{"iptables", "ip6tables"} {
		if err := removeKubeChains(family); err != nil {
			errs = append(errs, err)
		}
	}
	if left := proxyChains(); len(left) > 0 {
		errs = append(errs, fmt.Errorf("iptables chains of kube-proxy left after cleanup: %v", left))
	}
	return errors.Join(errs...)
}

// removeKubeChains removes, in every table of family (iptables or ip6tables), the rules of the built-in chains
// that jump to a KUBE-* chain, then those chains. Rules are deleted by number, highest first (their text holds
// quoted comments that would not survive a round trip through iptables' arguments).
func removeKubeChains(family string) error {
	out, err := exec.Command(family + "-save").Output()
	if err != nil {
		return fmt.Errorf("%s-save: %w", family, err)
	}
	var errs []error
	run := func(args ...string) string {
		out, err := exec.Command(family, append([]string{"-w"}, args...)...).CombinedOutput()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w: %s", family, strings.Join(args, " "), err, out))
		}
		return string(out)
	}
	table := ""
	var builtin, kube []string
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			table, builtin, kube = strings.TrimPrefix(line, "*"), nil, nil
		case strings.HasPrefix(line, ":"):
			fields := strings.Fields(strings.TrimPrefix(line, ":"))
			if len(fields) < 2 {
				continue
			}
			if strings.HasPrefix(fields[0], "KUBE-") {
				kube = append(kube, fields[0])
			} else if fields[1] != "-" { // a built-in chain has a policy
				builtin = append(builtin, fields[0])
			}
		case line == "COMMIT" && len(kube) > 0:
			for _, chain := range builtin {
				numbers := jumpsToKube(run("-t", table, "-L", chain, "-n", "--line-numbers"))
				for i := len(numbers) - 1; i >= 0; i-- {
					run("-t", table, "-D", chain, numbers[i])
				}
			}
			for _, c := range kube {
				run("-t", table, "-F", c)
			}
			for _, c := range kube {
				run("-t", table, "-X", c)
			}
		}
	}
	return errors.Join(errs...)
}

// jumpsToKube returns the numbers of the rules whose target is a KUBE-* chain in `iptables -L CHAIN -n
// --line-numbers` output, in order.
func jumpsToKube(list string) []string {
	var numbers []string
	for _, line := range strings.Split(list, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && strings.HasPrefix(fields[1], "KUBE-") {
			if _, err := strconv.Atoi(fields[0]); err == nil {
				numbers = append(numbers, fields[0])
			}
		}
	}
	return numbers
}

// proxyChains lists the chains named KUBE-* in iptables and ip6tables (every table). Only kube-proxy makes them
// here: the kubelet is configured not to (makeIPTablesUtilChains false), and one cluster runs per machine.
func proxyChains() []string {
	var out []string
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		b, err := exec.Command(save).Output()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, ":KUBE-") {
				name, _, _ := strings.Cut(strings.TrimPrefix(line, ":"), " ")
				out = append(out, save+" "+name)
			}
		}
	}
	return out
}
