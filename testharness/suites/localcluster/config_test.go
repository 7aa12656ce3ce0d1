package localcluster

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestContainerdConfigIsPrivateAndFitsThisKernel(t *testing.T) {
	dir := t.TempDir()
	path, err := writeContainerdConfig(containerdDirs{
		Dir: dir, Socket: dir + "/c.sock", PauseImage: PauseImage, CNIBinDir: cniBinDir, CNIConfDir: dir + "/net.d",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`root = "` + dir + `/root"`, `state = "` + dir + `/state"`, `address = "` + dir + `/c.sock"`,
		`restrict_oom_score_adj = true`, `SystemdCgroup = false`, `sandbox_image = "` + PauseImage + `"`,
		`conf_dir = "` + dir + `/net.d"`, `stream_server_address = "127.0.0.1"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("containerd config lacks %s:\n%s", want, b)
		}
	}
}

func TestKubeletConfigFitsThisMachine(t *testing.T) {
	dir := t.TempDir()
	p := kubeletPaths{Config: filepath.Join(dir, "config.json"), PodLogsDir: dir + "/logs", VolumePluginDir: dir + "/vp", CAFile: dir + "/ca.crt", RuntimeSocket: dir + "/c.sock"}
	if err := writeKubeletConfig(p, &state{CgroupRoot: "/aws-efs-csi-x"}, 1234, 1235); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	b, _ := os.ReadFile(p.Config)
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"failCgroupV1": false, "cgroupDriver": "cgroupfs", "cgroupRoot": "/aws-efs-csi-x", "address": "127.0.0.1",
		"healthzBindAddress": "127.0.0.1", "makeIPTablesUtilChains": false, "readOnlyPort": float64(0),
		"port": float64(1234), "podLogsDir": dir + "/logs", "volumePluginDir": dir + "/vp",
		"containerRuntimeEndpoint": "unix://" + dir + "/c.sock",
	} {
		if cfg[key] != want {
			t.Errorf("kubelet config %s = %v; want %v", key, cfg[key], want)
		}
	}
}

func TestCNIConfigMakesNoIPTablesRules(t *testing.T) {
	dir := t.TempDir()
	s := &state{Network: "efs-e2e-x", Bridge: "efse2ex", Subnet: "10.200.7.0/24"}
	if err := writeCNIConfig(dir, dir+"/ipam", s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "10-efs-e2e-x.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Name    string
		Plugins []map[string]any
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	br := conf.Plugins[0]
	if conf.Name != "efs-e2e-x" || br["bridge"] != "efse2ex" || br["ipMasq"] != false {
		t.Fatalf("bridge plugin %v of %s; want bridge efse2ex without masquerading", br, conf.Name)
	}
	for _, p := range conf.Plugins {
		if p["type"] == "portmap" || p["type"] == "firewall" {
			t.Errorf("plugin %v writes iptables rules", p["type"])
		}
	}
	if ipam := br["ipam"].(map[string]any); ipam["dataDir"] != dir+"/ipam" {
		t.Errorf("host-local dataDir = %v; want the cluster's %s (not /var/lib/cni)", ipam["dataDir"], dir+"/ipam")
	}
}

func TestOverlaps(t *testing.T) {
	_, subnet, _ := net.ParseCIDR("10.200.3.0/24")
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"10.200.3.1/24", true},
		{"10.0.0.1/8", true},
		{"10.200.4.1/24", false},
		{"127.0.0.1/8", false},
	} {
		ip, n, _ := net.ParseCIDR(tc.addr)
		n.IP = ip
		if got := overlaps(subnet, []net.Addr{n}); got != tc.want {
			t.Errorf("overlaps(%s, %s) = %t; want %t", subnet, tc.addr, got, tc.want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/tab\011x`: "/tab\tx", `/odd\0`: `/odd\0`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestStateRoundTripAndDownWithoutCluster(t *testing.T) {
	dir := t.TempDir()
	if found, err := Down(dir, os.Stderr); found || err != nil {
		t.Fatalf("Down on a directory without a cluster = %t, %v; want false, nil", found, err)
	}
	s := &state{Dir: dir, Node: "node-x", CgroupRoot: "/aws-efs-csi-x", Created: []string{"/var/lib/kubelet"}}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	got, err := loadState(dir)
	if err != nil || got.Node != "node-x" || got.CgroupRoot != s.CgroupRoot || len(got.Created) != 1 {
		t.Fatalf("loadState = %+v, %v; want %+v", got, err, s)
	}
}

func TestPauseImageHoldsOneStaticEntrypoint(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "pause")
	if err := os.WriteFile(bin, []byte("\x7fELF fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := singleBinaryImage(bin, "/pause")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/pause" {
		t.Fatalf("config %+v; want linux with entrypoint /pause", cfg)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v; want 1", len(layers), err)
	}
}

func TestServiceRulesSendTheKubernetesServiceToTheAPIServer(t *testing.T) {
	var got []string
	for _, r := range serviceRules("aws-efs-csi-local-cluster-x", "efse2ex", "127.0.0.1:6443") {
		got = append(got, r.table+" "+r.chain+" "+strings.Join(r.spec, " "))
	}
	want := []string{
		// the host and host-network pods
		"nat OUTPUT -d 10.0.0.1/32 -p tcp --dport 443 -m comment --comment aws-efs-csi-local-cluster-x -j DNAT --to-destination 127.0.0.1:6443",
		// pods on the pod network, and only from its bridge
		"nat PREROUTING -i efse2ex -d 10.0.0.1/32 -p tcp --dport 443 -m comment --comment aws-efs-csi-local-cluster-x -j DNAT --to-destination 127.0.0.1:6443",
		// nothing else from the bridge to loopback servers
		"filter INPUT -i efse2ex -d 127.0.0.0/8 -m conntrack ! --ctstate DNAT -m comment --comment aws-efs-csi-local-cluster-x -j DROP",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("serviceRules =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
