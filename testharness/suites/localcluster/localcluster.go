package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// nodeName is the node's name and host name. The kubelet refuses a loopback node IP, so the API server reaches
// it by host name (--kubelet-preferred-address-types=Hostname), and an address needs no name resolution.
const nodeName = "127.0.0.1"

// kubeletRoot is the kubelet's root directory. It is the fixed /var/lib/kubelet because the driver's DaemonSet,
// as the operator ships it, mounts that host path (plugins, plugins_registry, pods) with Bidirectional
// propagation; a cluster starts only where it does not exist yet, and removes it at teardown.
const kubeletRoot = "/var/lib/kubelet"

// Options configures Start.
type Options struct {
	// Dir holds everything of the cluster; it must be empty or missing.
	Dir string
	// Binaries is the Kubernetes set (cluster.Build).
	Binaries cluster.Binaries
	// Detach leaves the cluster running after this process exits (`cluster:up`); Down stops it.
	Detach bool
	// Log receives progress lines.
	Log io.Writer
}

// Cluster is a running single-node cluster.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// Node is the node's name.
	Node string

	control *cluster.Cluster
	state   *state
	lock    *os.File
	log     io.Writer
}

// Start starts the control plane and the node and waits until the node is Ready and the default service account
// exists. On error everything started so far is stopped and removed.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if names := listDir(dir); len(names) > 0 {
		return nil, fmt.Errorf("local cluster directory %s is not empty (%d entries): run Down on it or remove it", dir, len(names))
	}
	if opts.Binaries.KubeProxy == "" {
		return nil, errors.New("Options.Binaries has no KubeProxy: build the set with cluster.Build")
	}
	lock, err := lockMachine(ctx, log)
	if err != nil {
		return nil, err
	}
	if chains := proxyChains(); len(chains) > 0 {
		lock.Close()
		return nil, fmt.Errorf("iptables already has kube-proxy chains %v: another kube-proxy runs on this machine, or a local cluster was not torn down (`go tool mage cluster:down`, or `kube-proxy --cleanup`)", chains)
	}
	if _, err := os.Stat(kubeletRoot); err == nil {
		lock.Close()
		return nil, fmt.Errorf("%s exists: the local cluster's kubelet needs it for itself; remove it (after `go tool mage cluster:down` if a local cluster made it)", kubeletRoot)
	}
	id := randomID()
	s := &state{
		Dir: dir, Node: nodeName, ContainerdSocket: filepath.Join(dir, "containerd", "containerd.sock"),
		CgroupRoot: "/aws-efs-csi-" + id, Network: "efs-e2e-" + id, Bridge: "efse2e" + id,
		RuleComment: "aws-efs-csi-local-cluster-" + id, ProxyBinary: opts.Binaries.KubeProxy,
	}
	c = &Cluster{Node: s.Node, state: s, lock: lock, log: log, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	defer func() {
		if err != nil {
			c.Diagnose(context.WithoutCancel(ctx), log)
			_ = c.Stop()
			c = nil
		}
	}()
	launch := cluster.LaunchOptions{Detach: opts.Detach}
	fmt.Fprintf(log, "localcluster: starting the control plane in %s\n", dir)
	control, err := cluster.StartWith(ctx, opts.Binaries, dir, cluster.LaunchOptions{Detach: opts.Detach, ExtraFiles: []*os.File{lock}})
	if control != nil {
		c.control = control
	}
	if err != nil {
		return c, err
	}
	c.Config = control.Config
	s.Processes = append(s.Processes, control.Processes()...)
	if err := s.save(); err != nil {
		return c, err
	}
	if err := control.StartControllers(ctx, opts.Binaries); err != nil {
		return c, err
	}
	s.Processes = control.Processes()
	if err := control.WriteAdminKubeconfig(c.Kubeconfig); err != nil {
		return c, err
	}
	if err := addServiceRules(s, c.Config.Host); err != nil {
		return c, err
	}
	if err := c.startNode(ctx, opts.Binaries, launch); err != nil {
		return c, err
	}
	if err := c.waitReady(ctx, 3*time.Minute); err != nil {
		return c, err
	}
	if err := c.startProxy(ctx, opts.Binaries.KubeProxy, launch); err != nil {
		return c, err
	}
	fmt.Fprintf(log, "localcluster: node %s is Ready\n", s.Node)
	return c, nil
}

// startNode starts containerd with the pause image loaded, the pod network and the kubelet.
func (c *Cluster) startNode(ctx context.Context, bins cluster.Binaries, launch cluster.LaunchOptions) error {
	s := c.state
	var err error
	if s.Subnet, err = pickSubnet(int(s.Bridge[len(s.Bridge)-1])); err != nil {
		return err
	}
	// A pod reaching another pod of the bridge through a ClusterIP Service gets the answer straight over the
	// bridge; conntrack restores the Service's address in it only if bridged traffic passes iptables.
	if b, err := os.ReadFile("/proc/sys/net/bridge/bridge-nf-call-iptables"); err != nil || strings.TrimSpace(string(b)) != "1" {
		return fmt.Errorf("bridged traffic does not pass iptables (net.bridge.bridge-nf-call-iptables is %q, %v), so pods cannot reach each other through Services: modprobe br_netfilter && sysctl -w net.bridge.bridge-nf-call-iptables=1", b, err)
	}
	if err := createBridge(s.Bridge); err != nil {
		return err
	}
	s.NetNSBefore = listDir("/var/run/netns")
	for _, p := range []string{kubeletRoot, "/var/log/containers", "/var/lib/cni", "/run/containerd"} {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			s.Created = append(s.Created, p)
		}
	}
	if err := createCgroupRoot(s.CgroupRoot); err != nil {
		return err
	}
	if err := s.save(); err != nil {
		return err
	}
	cniConf := filepath.Join(s.Dir, "cni", "net.d")
	if err := writeCNIConfig(cniConf, filepath.Join(s.Dir, "cni", "ipam"), s); err != nil {
		return err
	}
	ctrDir := filepath.Join(s.Dir, "containerd")
	config, err := writeContainerdConfig(containerdDirs{
		Dir: ctrDir, Socket: s.ContainerdSocket, PauseImage: PauseImage, CNIBinDir: cniBinDir, CNIConfDir: cniConf,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.log, "localcluster: starting containerd (%s) and building the pause image\n", s.ContainerdSocket)
	ctrd, err := cluster.Launch("containerd", "/usr/bin/containerd", []string{"--config", config}, s.Dir, launch)
	if err != nil {
		return err
	}
	s.Processes = append(s.Processes, ctrd)
	if err := s.save(); err != nil {
		return err
	}
	pause, err := buildPauseImage(ctx, s.Dir, c.log)
	if err != nil {
		return err
	}
	_, closeCRI, err := dialCRI(ctx, s.ContainerdSocket, time.Minute)
	if err != nil {
		return err
	}
	closeCRI()
	if err := importImage(ctx, s.ContainerdSocket, pause); err != nil {
		return err
	}
	kubeconfig := filepath.Join(s.Dir, "kubelet.kubeconfig")
	if err := c.control.WriteKubeconfig(kubeconfig, "system:node:"+s.Node, "system:nodes"); err != nil {
		return err
	}
	ports, err := cluster.FreePorts(2)
	if err != nil {
		return err
	}
	kp := kubeletPaths{
		Config: filepath.Join(s.Dir, "kubelet", "config.json"), RootDir: kubeletRoot,
		CertDir: filepath.Join(s.Dir, "kubelet", "pki"), PodLogsDir: filepath.Join(s.Dir, "kubelet", "pod-logs"),
		VolumePluginDir: filepath.Join(s.Dir, "kubelet", "volume-plugins"),
		CAFile:          filepath.Join(s.Dir, "ca.crt"), RuntimeSocket: s.ContainerdSocket,
	}
	if err := writeKubeletConfig(kp, s, ports[0], ports[1]); err != nil {
		return err
	}
	fmt.Fprintf(c.log, "localcluster: starting kubelet as node %s\n", s.Node)
	kubelet, err := cluster.Launch("kubelet", bins.Kubelet, kp.args(kubeconfig, s.Node), s.Dir, launch)
	if err != nil {
		return err
	}
	s.Processes = append(s.Processes, kubelet)
	return s.save()
}

// waitReady waits for the node to be Ready and for the default namespace's service account (pods are refused
// until the controller-manager creates it).
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.checkRunning(); err != nil {
			return false, err
		}
		node, err := kube.CoreV1().Nodes().Get(ctx, c.Node, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		ready := false
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				ready = cond.Status == corev1.ConditionTrue
				last = fmt.Sprintf("node %s Ready=%s: %s %s", c.Node, cond.Status, cond.Reason, cond.Message)
			}
		}
		if !ready {
			return false, nil
		}
		if _, err := kube.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				last = "service account default/default not created yet"
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("local cluster not ready after %s (%s): %w", timeout, last, err)
	}
	return nil
}

func (c *Cluster) checkRunning() error {
	for _, p := range c.state.Processes {
		if gone, why := p.Exited(); gone {
			return errors.New(why)
		}
	}
	return nil
}

// Dir is the cluster's directory: data, configuration and one <name>.log per server.
func (c *Cluster) Dir() string { return c.state.Dir }

// Stop stops every server and removes everything the cluster made (see teardown). It is safe to call twice.
func (c *Cluster) Stop() error {
	if c.state == nil {
		return nil
	}
	err := teardown(c.state, c.log)
	c.state.Processes = nil
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
	return err
}

// Down stops the cluster whose directory is dir, started by another process with Detach, and removes everything
// it made. It reports whether there was a cluster; a directory without one is not an error.
func Down(dir string, log io.Writer) (bool, error) {
	s, err := loadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := teardown(s, log); err != nil {
		return true, err
	}
	return true, os.Remove(filepath.Join(dir, stateFile))
}

func randomID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
