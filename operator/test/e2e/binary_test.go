package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOperatorBinary runs the real `aws-efs-csi-driver-operator start` (library-go's controller command) against
// the control plane: it takes the leader Lease, serves metrics and health with the cluster's TLS profile, waits for
// the ClusterCSIDriver, installs the driver when it appears, and exits on SIGTERM.
func TestOperatorBinary(t *testing.T) {
	e := newEnv(t)
	e.strictTLSProfile(t, configv1.TLSProfileModernType)
	bin := e.startOperatorBinary(t)

	// The metrics and health endpoint follows the cluster's TLS profile: Modern allows TLS 1.3 only.
	eventually(t, time.Minute, "TLS 1.3 handshake with the metrics endpoint", func(context.Context) error { return bin.handshake(tls.VersionTLS13) })
	if err := bin.handshake(tls.VersionTLS12); err == nil {
		t.Error("TLS 1.2 handshake accepted under the Modern profile")
	}
	eventually(t, time.Minute, "PrometheusRule applied while the ClusterCSIDriver is missing", func(ctx context.Context) error {
		_, err := e.dyn.Resource(prometheusRuleGVR).Namespace(namespace).Get(ctx, "aws-efs-csi-driver-operator", metav1.GetOptions{})
		return err
	})
	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, 2*time.Minute, "driver installed by the binary", e.driverObjectsExist)

	if err := bin.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bin.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("operator did not exit within 60 s of SIGTERM")
	}
}

// TestOperatorBinaryRestartsOnTLSProfileChange: a new TLS profile for the operator ends the process (its pod restarts
// and serves with the new profile).
func TestOperatorBinaryRestartsOnTLSProfileChange(t *testing.T) {
	e := newEnv(t)
	e.strictTLSProfile(t, configv1.TLSProfileModernType)
	bin := e.startOperatorBinary(t)
	e.strictTLSProfile(t, configv1.TLSProfileIntermediateType)
	select {
	case err := <-bin.exited:
		if err == nil {
			t.Fatal("operator exited successfully after a TLS profile change, want a failure so that it restarts")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("operator still runs 60 s after its TLS profile changed")
	}
}

// operatorBinary is a running aws-efs-csi-driver-operator process.
type operatorBinary struct {
	cmd    *exec.Cmd
	addr   string
	exited chan error
}

// handshake makes a TLS handshake with the operator's metrics and health endpoint, allowing only version.
func (b *operatorBinary) handshake(version uint16) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", b.addr,
		&tls.Config{MinVersion: version, MaxVersion: version, InsecureSkipVerify: true}) //nolint:gosec // the endpoint's self-signed certificate
	if err != nil {
		return err
	}
	return conn.Close()
}

// strictTLSProfile sets the APIServer's TLS profile and asks every component to honour it (the feature-gated
// tlsAdherence field needs the TechPreviewNoUpgrade CRD).
func (e *env) strictTLSProfile(t *testing.T, profile configv1.TLSProfileType) {
	t.Helper()
	ctx := t.Context()
	crd := readFile(t, filepath.Join(apiModuleDir(t), "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_apiservers-TechPreviewNoUpgrade.crd.yaml"))
	if err := e.cl.InstallCRDs(ctx, crd); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "APIServer TLS profile set", func(ctx context.Context) error {
		as, err := e.conf.ConfigV1().APIServers().Get(ctx, "cluster", metav1.GetOptions{})
		if err != nil {
			return err
		}
		as.Spec.TLSAdherence = configv1.TLSAdherencePolicyStrictAllComponents
		as.Spec.TLSSecurityProfile = &configv1.TLSSecurityProfile{Type: profile}
		switch profile {
		case configv1.TLSProfileModernType:
			as.Spec.TLSSecurityProfile.Modern = &configv1.ModernTLSProfile{}
		case configv1.TLSProfileIntermediateType:
			as.Spec.TLSSecurityProfile.Intermediate = &configv1.IntermediateTLSProfile{}
		}
		as, err = e.conf.ConfigV1().APIServers().Update(ctx, as, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if as.Spec.TLSAdherence != configv1.TLSAdherencePolicyStrictAllComponents {
			return fmt.Errorf("tlsAdherence not stored (CRD without the field yet)")
		}
		return nil
	})
}

// startOperatorBinary builds and runs the real `aws-efs-csi-driver-operator start` (library-go's controller command)
// against the control plane and waits until it holds the leader Lease.
func (e *env) startOperatorBinary(t *testing.T) *operatorBinary {
	t.Helper()
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
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	cfg := testConfig()
	cmd := exec.Command(bin, "start", "-v=2", "--kubeconfig="+kubeconfig, "--namespace="+namespace, "--listen="+addr)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir,
		"DRIVER_IMAGE="+cfg.Images.Driver, "PROVISIONER_IMAGE="+cfg.Images.Provisioner,
		"NODE_DRIVER_REGISTRAR_IMAGE="+cfg.Images.NodeDriverRegistrar, "LIVENESS_PROBE_IMAGE="+cfg.Images.LivenessProbe,
		"KUBE_RBAC_PROXY_IMAGE="+cfg.Images.KubeRBACProxy, "TOOLS_IMAGE="+cfg.Images.Tools,
		"OPERATOR_NAME=aws-efs-csi-driver-operator", "POD_NAME=aws-efs-csi-driver-operator-e2e")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &operatorBinary{cmd: cmd, addr: addr, exited: make(chan error, 1)}
	go func() { b.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("operator log (last 6000 bytes):\n%s", out[max(0, len(out)-6000):])
				for _, line := range strings.Split(string(out), "\n") {
					if strings.Contains(line, "TLS") {
						t.Logf("operator log: %s", line)
					}
				}
			}
		}
	})
	eventually(t, 2*time.Minute, "leader Lease taken", func(ctx context.Context) error {
		select {
		case err := <-b.exited:
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
	return b
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

// TestOperatorBinaryRefusesToStartWithoutTheTLSProfile: when APIServer/cluster cannot be read (here: an identity
// that may do everything the operator does except read apiservers), the operator does not serve with a default
// profile that may be weaker than the cluster's; it exits with an error naming the APIServer, so that its pod
// restarts and tries again.
func TestOperatorBinaryRefusesToStartWithoutTheTLSProfile(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	const user = "e2e-operator-without-apiservers"
	// RBAC has no deny: every group the operator and library-go's controller command use, and config.openshift.io
	// without apiservers.
	role := ok(e.kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"", "apps", "coordination.k8s.io", "rbac.authorization.k8s.io", "storage.k8s.io", "policy", "events.k8s.io",
				"monitoring.coreos.com", "operator.openshift.io", "cloudcredential.openshift.io", "aws-efs.managed.openshift.io",
				"apiextensions.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "security.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{"config.openshift.io"}, Resources: []string{"infrastructures", "proxies", "featuregates", "clusterversions", "clusteroperators", "networks"},
				Verbs: []string{"*"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
		}}, metav1.CreateOptions{}))(t)
	ok(e.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}, metav1.CreateOptions{}))(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "aws-efs-csi-driver-operator")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.CommandContext(t.Context(), "go", append(args, "github.com/openshift/aws-efs-csi/operator/cmd/aws-efs-csi-driver-operator")...).CombinedOutput(); err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := e.cl.WriteKubeconfig(kubeconfig, user); err != nil {
		t.Fatal(err)
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "start", "-v=2", "--kubeconfig="+kubeconfig, "--namespace="+namespace, "--listen="+addr)
	cmd.Dir = dir
	cfg := testConfig()
	cmd.Env = append(os.Environ(), "TMPDIR="+dir,
		"DRIVER_IMAGE="+cfg.Images.Driver, "PROVISIONER_IMAGE="+cfg.Images.Provisioner,
		"NODE_DRIVER_REGISTRAR_IMAGE="+cfg.Images.NodeDriverRegistrar, "LIVENESS_PROBE_IMAGE="+cfg.Images.LivenessProbe,
		"KUBE_RBAC_PROXY_IMAGE="+cfg.Images.KubeRBACProxy, "TOOLS_IMAGE="+cfg.Images.Tools,
		"OPERATOR_NAME=aws-efs-csi-driver-operator", "POD_NAME=aws-efs-csi-driver-operator-e2e")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err == nil {
			t.Fatalf("operator exited successfully without reading the TLS profile; want a failure\n%s", out.String())
		}
		if !strings.Contains(out.String(), "reading APIServer cluster for the cluster's TLS profile") || !strings.Contains(out.String(), "forbidden") {
			t.Fatalf("operator output does not name the APIServer it could not read:\n%s", out.String())
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("operator still runs 90 s after failing to read the TLS profile\n%s", lastN(strings.Split(out.String(), "\n"), 30))
	}
}
