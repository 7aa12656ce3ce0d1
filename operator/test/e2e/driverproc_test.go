package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// driverBinaries are the driver and fakeaws programs of the driver module, built once per test process.
var driverBinaries struct {
	once            sync.Once
	dir             string
	driver, fakeaws string
	err             error
}

// buildDriverBinaries builds aws-efs-csi-driver and fakeaws from the driver module next to this one (the go.work
// workspace), without the race detector: they are the programs under test, not this test's code.
func buildDriverBinaries(t *testing.T) (driver, fakeaws string) {
	t.Helper()
	b := &driverBinaries
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "aws-efs-e2e-driver-")
		if b.err != nil {
			return
		}
		wd, err := os.Getwd()
		if err != nil {
			b.err = err
			return
		}
		root, err := repoRoot(wd)
		if err != nil {
			b.err = err
			return
		}
		cmd := exec.Command("go", "build", "-o", b.dir+"/", "./cmd/aws-efs-csi-driver", "./test/fakeaws/cmd/fakeaws")
		cmd.Dir = filepath.Join(root, "driver")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building the driver and fakeaws: %v\n%s", err, out)
			return
		}
		b.driver, b.fakeaws = filepath.Join(b.dir, "aws-efs-csi-driver"), filepath.Join(b.dir, "fakeaws")
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.driver, b.fakeaws
}

// removeDriverBinaries deletes what buildDriverBinaries built; TestMain calls it.
func removeDriverBinaries() {
	if driverBinaries.dir != "" {
		_ = os.RemoveAll(driverBinaries.dir)
	}
}

// process is a program started by a test, with its combined output collected.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// output returns everything the process wrote so far.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startProcess starts cmd and stops it (SIGTERM, then SIGKILL) when the test ends, logging its output on failure.
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			out := p.output()
			t.Logf("%s output (last 6000 bytes):\n%s", name, out[max(0, len(out)-6000):])
		}
	})
	return p
}

func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// startFakeAWS runs the fakeaws program on a free loopback port and returns its URL.
func startFakeAWS(t *testing.T, args ...string) string {
	t.Helper()
	_, bin := buildDriverBinaries(t)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = p
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		_ = cmd.Process.Kill()
		t.Fatalf("fakeaws printed no URL: %v", sc.Err())
	}
	u := strings.TrimSpace(sc.Text())
	go func() {
		for sc.Scan() {
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return u
}

// nodeDriver describes one run of the driver in node mode as the node DaemonSet's pod would run it.
type nodeDriver struct {
	// node is the Node the pod runs on (CSI_NODE_NAME).
	node string
	// imds is the instance metadata endpoint; "" makes it unreachable (a closed loopback port).
	imds string
	// env overrides or adds environment variables after the DaemonSet's; a value of "-" removes the variable.
	env map[string]string
}

// envReference matches a $(VAR) reference in container arguments.
var envReference = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// runNodeDriver runs the driver binary with the arguments and environment of the csi-driver container of the node
// DaemonSet the operator applied, authenticated as the node ServiceAccount through the in-cluster configuration
// (token and CA at the standard path, inside a private mount namespace), with the node's host paths moved into a
// temporary directory. It needs root (the mount namespace).
func (e *env) runNodeDriver(t *testing.T, nd nodeDriver) *process {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the driver reads its ServiceAccount token from /var/run/secrets/kubernetes.io/serviceaccount, which the test mounts in a private mount namespace; CI runs as root")
	}
	bin, _ := buildDriverBinaries(t)
	ctx := t.Context()
	ds := ok(e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{}))(t)
	c := findContainer(ds.Spec.Template.Spec.Containers, "csi-driver")
	if c.Name == "" {
		t.Fatal("the node DaemonSet has no csi-driver container")
	}
	dir := t.TempDir()
	sa := ds.Spec.Template.Spec.ServiceAccountName
	token := ok(e.kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(3600)},
	}, metav1.CreateOptions{}))(t)
	ca := ok(e.cl.ServingCA())(t)
	secrets := filepath.Join(dir, "serviceaccount")
	if err := os.MkdirAll(secrets, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"token": []byte(token.Status.Token), "ca.crt": ca, "namespace": []byte(namespace)} {
		if err := os.WriteFile(filepath.Join(secrets, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	api := ok(url.Parse(e.cl.Config.Host))(t)

	// The pod's environment: the container's variables, downward-API node name, the in-cluster service address.
	vars := map[string]string{}
	for _, ev := range c.Env {
		switch {
		case ev.ValueFrom == nil:
			vars[ev.Name] = ev.Value
		case ev.ValueFrom.FieldRef != nil && ev.ValueFrom.FieldRef.FieldPath == "spec.nodeName":
			vars[ev.Name] = nd.node
		default:
			t.Fatalf("csi-driver env %s: the test cannot resolve %+v", ev.Name, ev.ValueFrom)
		}
	}
	vars["KUBERNETES_SERVICE_HOST"], vars["KUBERNETES_SERVICE_PORT"] = api.Hostname(), api.Port()
	imds := nd.imds
	if imds == "" {
		imds = "http://" + closedPort(t)
	}
	vars["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds
	for k, v := range nd.env {
		if v == "-" {
			delete(vars, k)
		} else {
			vars[k] = v
		}
	}

	// The container's arguments with $(VAR) expanded, the endpoint and host paths moved under dir.
	var args []string
	for _, a := range c.Args {
		a = envReference.ReplaceAllStringFunc(a, func(ref string) string { return vars[envReference.FindStringSubmatch(ref)[1]] })
		if strings.HasPrefix(a, "--endpoint=") {
			continue
		}
		args = append(args, a)
	}
	watchdog := filepath.Join(dir, "watchdog")
	// A stand-in for amazon-efs-mount-watchdog, which has nothing to supervise here: the test is about the
	// driver's requests to the API server, not about mounts.
	if err := os.WriteFile(watchdog, []byte("#!/bin/sh\nexec sleep 3600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"static", "legacy", "config", "state", "records"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "static", "efs-utils.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--endpoint=unix://"+filepath.Join(dir, "csi.sock"),
		"--efs-utils-config-dir-path="+filepath.Join(dir, "config"), "--efs-utils-config-legacy-dir-path="+filepath.Join(dir, "legacy"),
		"--efs-utils-static-files-path="+filepath.Join(dir, "static"), "--efs-utils-config-link-path="+filepath.Join(dir, "etc-amazon-efs"),
		"--efs-utils-state-dir="+filepath.Join(dir, "state"), "--publish-records-dir="+filepath.Join(dir, "records"),
		"--efs-utils-watchdog-path="+watchdog)

	// A private mount namespace in which /run (hence /var/run) is a fresh tmpfs holding only the token.
	script := `set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/secrets/kubernetes.io/serviceaccount
cp "$SA_DIR"/* /run/secrets/kubernetes.io/serviceaccount/
exec "$@"`
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", bin}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SA_DIR=" + secrets}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return startProcess(t, "driver (node mode)", cmd)
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ports, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

func ptrInt64(v int64) *int64 { return &v }

// serviceAccountRequests returns the requests the API server logged for one ServiceAccount.
func (e *env) serviceAccountRequests(t *testing.T, sa string) []cluster.AuditEvent {
	t.Helper()
	all, err := e.cl.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	user := cluster.ServiceAccountUser(namespace, sa)
	var out []cluster.AuditEvent
	for _, ev := range all {
		if ev.User.Username == user {
			out = append(out, ev)
		}
	}
	return out
}

// testNode creates a Node as an AWS node registers it: provider ID with the instance ID, topology labels.
func (e *env) testNode(t *testing.T, name string, taints ...corev1.Taint) *corev1.Node {
	t.Helper()
	return ok(e.kube.CoreV1().Nodes().Create(t.Context(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": "us-east-1b", "kubernetes.io/os": "linux",
		}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1b/i-0a1b2c3d4e5f60718", Taints: taints},
	}, metav1.CreateOptions{}))(t)
}

// waitForOutput waits until the process has written a line matching re.
func waitForOutput(t *testing.T, p *process, timeout time.Duration, re *regexp.Regexp) {
	t.Helper()
	eventually(t, timeout, "driver log line "+re.String(), func(context.Context) error {
		select {
		case <-p.done:
			return fmt.Errorf("the driver exited")
		default:
		}
		if !re.MatchString(p.output()) {
			return fmt.Errorf("not logged yet")
		}
		return nil
	})
}

// freeLoopbackAddr returns host:port of a loopback port that was free a moment ago.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// repoRoot returns the directory holding go.work, searching upwards from dir.
func repoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s", dir)
		}
	}
}
