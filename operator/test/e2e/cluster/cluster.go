package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceCIDR is the cluster's Service address range; the kubernetes Service takes its first address.
const ServiceCIDR = "10.0.0.0/24"

// Cluster is a running etcd and kube-apiserver, and the controller-manager and scheduler once started.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// CA signs every certificate of the cluster.
	CA    *CA
	dir   string
	creds *credentials
	opts  LaunchOptions
	procs []*Process
}

// Start starts etcd and kube-apiserver with working directory dir (a fresh temporary directory) and waits until
// the API server is ready. Stop ends both.
func Start(ctx context.Context, bins Binaries, dir string) (*Cluster, error) {
	return StartWith(ctx, bins, dir, LaunchOptions{})
}

// StartWith is Start with the given launch options for every process.
func StartWith(ctx context.Context, bins Binaries, dir string, opts LaunchOptions) (*Cluster, error) {
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	creds, err := writeCredentials(dir, ca)
	if err != nil {
		return nil, fmt.Errorf("generating credentials: %w", err)
	}
	c := &Cluster{CA: ca, dir: dir, creds: creds, opts: opts}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClient := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	etcdPeer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if err := c.launch("etcd", bins.Etcd,
		"--name=e2e", "--data-dir="+filepath.Join(dir, "etcd"), "--logger=zap", "--log-level=warn",
		"--listen-client-urls="+etcdClient, "--advertise-client-urls="+etcdClient,
		"--listen-peer-urls="+etcdPeer, "--initial-advertise-peer-urls="+etcdPeer,
		"--initial-cluster=e2e="+etcdPeer, "--unsafe-no-fsync=true",
	); err != nil {
		return nil, err
	}
	port := ports[2]
	auditPolicy, auditLog, err := auditFiles(dir)
	if err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.launch("kube-apiserver", bins.KubeAPIServer,
		"--etcd-servers="+etcdClient,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--tls-cert-file="+creds.servingCert, "--tls-private-key-file="+creds.servingKey,
		"--client-ca-file="+creds.caFile,
		"--kubelet-client-certificate="+creds.kubeletClientCert, "--kubelet-client-key="+creds.kubeletClientKey,
		// A local node's host name is 127.0.0.1 (the kubelet refuses a loopback node IP), where its kubelet serves.
		"--kubelet-preferred-address-types=Hostname",
		"--service-account-key-file="+creds.saKey, "--service-account-signing-key-file="+creds.saKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range="+ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		"--audit-policy-file="+auditPolicy, "--audit-log-path="+auditLog, "--audit-log-format=json", "--audit-log-mode=blocking",
		"--v=0",
	); err != nil {
		c.Stop()
		return nil, err
	}
	c.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(port),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca.PEM, CertData: creds.admin.Cert, KeyData: creds.admin.Key},
		QPS:             100, Burst: 200,
	}
	if err := c.waitReady(ctx, 2*time.Minute); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// StartControllers starts kube-controller-manager (every controller under its own service account) and
// kube-scheduler, for a cluster that runs pods.
func (c *Cluster) StartControllers(ctx context.Context, bins Binaries) error {
	kcm := filepath.Join(c.dir, "kube-controller-manager.kubeconfig")
	if err := c.WriteKubeconfig(kcm, "system:kube-controller-manager"); err != nil {
		return err
	}
	sched := filepath.Join(c.dir, "kube-scheduler.kubeconfig")
	if err := c.WriteKubeconfig(sched, "system:kube-scheduler"); err != nil {
		return err
	}
	if err := c.launch("kube-controller-manager", bins.KubeControllerManager,
		"--kubeconfig="+kcm, "--use-service-account-credentials=true",
		"--service-account-private-key-file="+c.creds.saKey, "--root-ca-file="+c.creds.caFile,
		"--service-cluster-ip-range="+ServiceCIDR, "--allocate-node-cidrs=false",
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0", "--v=0",
	); err != nil {
		return err
	}
	return c.launch("kube-scheduler", bins.KubeScheduler,
		"--kubeconfig="+sched, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0", "--v=0",
	)
}

// WriteKubeconfig writes a kubeconfig for user in groups, with a client certificate the CA signs.
func (c *Cluster) WriteKubeconfig(path, user string, groups ...string) error {
	pair, err := c.CA.ClientCert(user, groups...)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.CA.PEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.Cert, ClientKeyData: pair.Key}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: user}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}

// WriteAdminKubeconfig writes a kubeconfig of the admin (system:masters) user.
func (c *Cluster) WriteAdminKubeconfig(path string) error {
	return c.WriteKubeconfig(path, "e2e-admin", "system:masters")
}

func (c *Cluster) launch(name, bin string, args ...string) error {
	p, err := Launch(name, bin, args, c.dir, c.opts)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	tr, err := rest.TransportFor(c.Config)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Config.Host+"/readyz", nil)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/readyz: %d %s", resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver not ready after %s (logs in %s): %w", timeout, c.dir, err)
		}
		if err := c.CheckRunning(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// CheckRunning returns an error naming the first process of the cluster that has ended.
func (c *Cluster) CheckRunning() error {
	for _, p := range c.procs {
		if gone, why := p.Exited(); gone {
			return fmt.Errorf("%s", why)
		}
	}
	return nil
}

// Processes are the servers the cluster started, in start order.
func (c *Cluster) Processes() []*Process { return c.procs }

// Stop terminates the processes this cluster started, the last started first.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop(10 * time.Second)
	}
	c.procs = nil
}

// Dir is where the cluster keeps its data and logs (<name>.log per process).
func (c *Cluster) Dir() string { return c.dir }

// FreePorts returns n distinct free loopback TCP ports.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ServingCA returns the CA that signed kube-apiserver's serving certificate (the cluster CA, which signs every
// certificate): what an in-cluster client puts in its ca.crt.
func (c *Cluster) ServingCA() ([]byte, error) {
	return c.CA.PEM, nil
}
