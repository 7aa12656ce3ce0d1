package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Cluster is a running etcd and kube-apiserver.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	dir    string
	procs  []*exec.Cmd
	logs   []*os.File
}

// Start starts etcd and kube-apiserver with working directory dir (a fresh temporary directory) and waits until
// the API server is ready. Stop ends both.
func Start(ctx context.Context, bins Binaries, dir string) (*Cluster, error) {
	c := &Cluster{dir: dir}
	creds, err := writeCredentials(dir)
	if err != nil {
		return nil, fmt.Errorf("generating credentials: %w", err)
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClient := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	etcdPeer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if err := c.start(ctx, "etcd", bins.Etcd,
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
	if err := c.start(ctx, "kube-apiserver", bins.KubeAPIServer,
		"--etcd-servers="+etcdClient,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--client-ca-file="+creds.caFile,
		"--service-account-key-file="+creds.saKey, "--service-account-signing-key-file="+creds.saKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--audit-policy-file="+auditPolicy, "--audit-log-path="+auditLog, "--audit-log-format=json", "--audit-log-mode=blocking",
		"--v=0",
	); err != nil {
		c.Stop()
		return nil, err
	}
	c.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(port),
		TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertData: creds.clientCertPEM, KeyData: creds.clientKeyPEM},
		QPS:             100, Burst: 200,
	}
	if err := c.waitReady(ctx, 2*time.Minute); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, name, bin string, args ...string) error {
	logFile, err := os.Create(filepath.Join(c.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	c.procs = append(c.procs, cmd)
	c.logs = append(c.logs, logFile)
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
		for _, p := range c.procs {
			if p.ProcessState != nil {
				return fmt.Errorf("%s exited; see %s", p.Path, c.dir)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// Stop terminates the processes this cluster started, API server first.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	for _, f := range c.logs {
		f.Close()
	}
	c.procs, c.logs = nil, nil
}

// Dir is where the cluster keeps its data and logs.
func (c *Cluster) Dir() string { return c.dir }

// freePorts returns n distinct free loopback TCP ports.
func freePorts(n int) ([]int, error) {
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

// ServingCA returns the certificate kube-apiserver generated for itself (a self-signed CA and the serving
// certificate it signed, for 127.0.0.1): what an in-cluster client puts in its ca.crt.
func (c *Cluster) ServingCA() ([]byte, error) {
	return os.ReadFile(filepath.Join(c.dir, "certs", "apiserver.crt"))
}
