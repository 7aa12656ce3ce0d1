package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOperatorBinary runs the real `aws-efs-csi-driver-operator start` (library-go's controller command) against
// the control plane: it takes the leader Lease, waits for the ClusterCSIDriver, installs the driver when it
// appears, and exits on SIGTERM.
func TestOperatorBinary(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "aws-efs-csi-driver-operator")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.CommandContext(t.Context(), "go", append(args, "github.com/openshift/aws-efs-csi/operator/cmd/aws-efs-csi-driver-operator")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, e.kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	logPath := filepath.Join(dir, "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cfg := testConfig()
	cmd := exec.Command(bin, "start", "-v=2", "--kubeconfig="+kubeconfig, "--namespace="+namespace, "--listen=127.0.0.1:"+strconv.Itoa(port))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"DRIVER_IMAGE="+cfg.Images.Driver, "PROVISIONER_IMAGE="+cfg.Images.Provisioner,
		"NODE_DRIVER_REGISTRAR_IMAGE="+cfg.Images.NodeDriverRegistrar, "LIVENESS_PROBE_IMAGE="+cfg.Images.LivenessProbe,
		"KUBE_RBAC_PROXY_IMAGE="+cfg.Images.KubeRBACProxy, "TOOLS_IMAGE="+cfg.Images.Tools,
		"OPERATOR_NAME=aws-efs-csi-driver-operator", "POD_NAME=aws-efs-csi-driver-operator-e2e")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("operator log (last 6000 bytes):\n%s", b[max(0, len(b)-6000):])
			}
		}
	})

	eventually(t, 2*time.Minute, "leader Lease taken", func(ctx context.Context) error {
		select {
		case err := <-exited:
			t.Fatalf("operator exited: %v", err)
		default:
		}
		lease, err := e.kube.CoordinationV1().Leases(namespace).Get(ctx, "aws-efs-csi-driver-operator-lock", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("lease without holder")
		}
		return nil
	})
	eventually(t, time.Minute, "PrometheusRule applied while the ClusterCSIDriver is missing", func(ctx context.Context) error {
		_, err := e.dyn.Resource(prometheusRuleGVR).Namespace(namespace).Get(ctx, "aws-efs-csi-driver-operator", metav1.GetOptions{})
		return err
	})
	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, 2*time.Minute, "driver installed by the binary", e.driverObjectsExist)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("operator did not exit within 60 s of SIGTERM")
	}
}

// kubeconfig renders the admin client configuration as a kubeconfig file.
func (e *env) kubeconfig() []byte {
	c := e.cl.Config
	b64 := base64.StdEncoding.EncodeToString
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, c.Host, b64(c.CertData), b64(c.KeyData)))
}
