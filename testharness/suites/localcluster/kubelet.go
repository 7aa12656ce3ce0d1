package localcluster

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// kubeletPaths are the files and directories of the node's kubelet.
type kubeletPaths struct {
	Config, RootDir, CertDir, PodLogsDir, VolumePluginDir, CAFile, RuntimeSocket string
}

// writeKubeletConfig writes the KubeletConfiguration. What this machine needs (reference/local-peers.md §8.1):
// cgroup v1 is allowed explicitly (failCgroupV1), cgroups are managed directly (cgroupfs), the kubelet serves on
// loopback, does not touch iptables, and keeps pod logs and volume plugins under its own directory. Eviction
// thresholds are low so that a busy development disk does not evict the tests' pods.
func writeKubeletConfig(p kubeletPaths, s *state, port, healthzPort int) error {
	cfg := map[string]any{
		"apiVersion":                  "kubelet.config.k8s.io/v1beta1",
		"kind":                        "KubeletConfiguration",
		"failCgroupV1":                false,
		"cgroupDriver":                "cgroupfs",
		"cgroupRoot":                  s.CgroupRoot,
		"containerRuntimeEndpoint":    "unix://" + p.RuntimeSocket,
		"address":                     "127.0.0.1",
		"port":                        port,
		"readOnlyPort":                0,
		"healthzBindAddress":          "127.0.0.1",
		"healthzPort":                 healthzPort,
		"makeIPTablesUtilChains":      false,
		"podLogsDir":                  p.PodLogsDir,
		"volumePluginDir":             p.VolumePluginDir,
		"failSwapOn":                  false,
		"resolvConf":                  "/etc/resolv.conf",
		"serializeImagePulls":         false,
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%",
		},
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": p.CAFile},
		},
		"authorization":             map[string]any{"mode": "Webhook"},
		"registerNode":              true,
		"nodeStatusReportFrequency": "10s",
		"syncFrequency":             "10s",
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

func (p kubeletPaths) args(kubeconfig, node string) []string {
	return []string{
		"--config=" + p.Config, "--kubeconfig=" + kubeconfig, "--root-dir=" + p.RootDir, "--cert-dir=" + p.CertDir,
		"--hostname-override=" + node, "--v=1",
	}
}
