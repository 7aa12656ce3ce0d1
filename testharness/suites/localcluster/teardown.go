package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// teardown stops the cluster of s and removes what it made, in an order that lets each part clean up after
// itself first: kube-proxy stops and its iptables chains are removed (`kube-proxy --cleanup`), the kubelet stops
// (nothing recreates pods), every pod sandbox is removed through the CRI (containers killed, CNI DEL, network
// namespace removed), containerd stops; then whatever is left is removed by force: shims, processes in the
// kubelet's cgroups, mounts, network namespaces, the bridge and its veths, the harness's iptables rules, CNI
// cache entries, shim sockets, container log links and fixed paths the cluster created. The control plane stops
// last. Every step runs even when one fails; the error lists the failures.
func teardown(s *state, log io.Writer) error {
	var errs []error
	byName := map[string]*cluster.Process{}
	for _, p := range s.Processes {
		byName[p.Name] = p
	}
	if p := byName["kube-proxy"]; p != nil {
		p.Stop(10 * time.Second)
	}
	if err := cleanupProxy(s, s.ProxyBinary); err != nil {
		errs = append(errs, err)
	}
	if p := byName["kubelet"]; p != nil {
		p.Stop(20 * time.Second)
	}
	taskIDs := listDir(filepath.Join(s.Dir, "containerd", "state", "io.containerd.runtime.v2.task", criNamespace))
	if p := byName["containerd"]; p != nil {
		if gone, _ := p.Exited(); !gone {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if rt, closeCRI, err := dialCRI(ctx, s.ContainerdSocket, 10*time.Second); err != nil {
				errs = append(errs, err)
			} else {
				if err := removeAllSandboxes(ctx, rt); err != nil {
					errs = append(errs, fmt.Errorf("removing pod sandboxes: %w", err))
				}
				closeCRI()
			}
			cancel()
			taskIDs = append(taskIDs, listDir(filepath.Join(s.Dir, "containerd", "state", "io.containerd.runtime.v2.task", criNamespace))...)
		}
		p.Stop(20 * time.Second)
	}
	if s.ContainerdSocket != "" {
		for _, pid := range processesWithArg("-address", s.ContainerdSocket) {
			fmt.Fprintf(log, "localcluster: killing leftover shim %d\n", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if s.CgroupRoot != "" {
		if err := removeCgroupRoot(s.CgroupRoot); err != nil {
			errs = append(errs, err)
		}
	}
	var netns []string
	before := map[string]bool{}
	for _, n := range s.NetNSBefore {
		before[n] = true
	}
	for _, n := range listDir("/var/run/netns") {
		if strings.HasPrefix(n, "cni-") && !before[n] && s.Bridge != "" {
			netns = append(netns, filepath.Join("/var/run/netns", n))
		}
	}
	if err := unmountAll(append([]string{s.Dir, kubeletRoot}, netns...)...); err != nil {
		errs = append(errs, err)
	}
	for _, n := range netns {
		fmt.Fprintf(log, "localcluster: removing leftover network namespace %s\n", n)
		_ = os.Remove(n)
	}
	if s.Bridge != "" {
		if err := removeBridge(s.Bridge); err != nil {
			errs = append(errs, err)
		}
	}
	if s.RuleComment != "" {
		if err := removeServiceRules(s.RuleComment); err != nil {
			errs = append(errs, err)
		}
	}
	if s.Network != "" {
		for _, f := range cniCacheEntries(s.Network) {
			_ = os.Remove(f)
		}
	}
	for _, id := range taskIDs {
		_ = os.Remove(shimSocket(s.ContainerdSocket, criNamespace, id))
	}
	removeContainerLogLinks(s.Dir)
	for i := len(s.Processes) - 1; i >= 0; i-- {
		if n := s.Processes[i].Name; n != "kubelet" && n != "containerd" {
			s.Processes[i].Stop(10 * time.Second)
		}
	}
	for _, p := range s.Created {
		// Never remove through a mount: that would delete files of whatever is mounted there.
		if ms, err := mountsUnder(p); err != nil || len(ms) > 0 {
			errs = append(errs, fmt.Errorf("not removing %s: still mounted below it: %v %v", p, ms, err))
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeBridge deletes the pod network's bridge and the veths still attached to it.
func removeBridge(bridge string) error {
	if _, err := os.Stat("/sys/class/net/" + bridge); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, port := range listDir("/sys/class/net/" + bridge + "/brif") {
		_ = exec.Command("ip", "link", "delete", port).Run()
	}
	if out, err := exec.Command("ip", "link", "delete", bridge).CombinedOutput(); err != nil {
		return fmt.Errorf("ip link delete %s: %w: %s", bridge, err, out)
	}
	return nil
}

// removeContainerLogLinks removes the kubelet's /var/log/containers links into the cluster's directory (links
// of containers removed behind the kubelet's back, by teardown).
func removeContainerLogLinks(dir string) {
	for _, n := range listDir("/var/log/containers") {
		p := filepath.Join("/var/log/containers", n)
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, dir+"/") {
			_ = os.Remove(p)
		}
	}
}
