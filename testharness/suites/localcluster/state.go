package localcluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// stateFile holds what Down needs to stop a cluster that another process started.
const stateFile = "cluster.json"

// state is everything the cluster made that Stop must undo, saved under its directory as the parts start.
type state struct {
	Dir string
	// Node is the node's name, unique per cluster.
	Node string
	// Processes are the servers, in start order.
	Processes []*cluster.Process
	// ContainerdSocket is containerd's private gRPC socket; shims are found by it.
	ContainerdSocket string
	// CgroupRoot is the kubelet's cgroup root, created in every cgroup v1 hierarchy.
	CgroupRoot string
	// Network, Bridge and Subnet are the pod network: CNI network name, bridge device, IPv4 subnet.
	Network, Bridge, Subnet string
	// RuleComment marks the harness's own iptables rules (service.go).
	RuleComment string
	// ProxyBinary and ProxyConfig are kube-proxy's, kept to remove its iptables chains (`kube-proxy --cleanup`).
	ProxyBinary, ProxyConfig string
	// NetNSBefore lists /var/run/netns before containerd started: the other entries are the cluster's.
	NetNSBefore []string
	// Created lists fixed host paths that did not exist before the cluster made them.
	Created []string
}

func (s *state) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.Dir, stateFile))
}

func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, fmt.Errorf("no local cluster state in %s: %w", dir, err)
	}
	s := &state{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return s, nil
}
