package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	"github.com/openshift/aws-efs-csi/operator/assets"
	"github.com/openshift/aws-efs-csi/operator/pkg/config"
	"github.com/openshift/aws-efs-csi/operator/pkg/operator"
	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

const (
	namespace    = "openshift-cluster-csi-drivers"
	ccoNamespace = "openshift-cloud-credential-operator"
	infraName    = "e2e-x7k2p"
	crName       = operator.ClusterCSIDriverName
	// resync is the operator's resync period in these tests; library-go's workload controllers resync every minute.
	resync = 20 * time.Second
)

var (
	credentialsRequestGVR = schema.GroupVersionResource{Group: "cloudcredential.openshift.io", Version: "v1", Resource: "credentialsrequests"}
	serviceMonitorGVR     = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}
	prometheusRuleGVR     = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}
)

// env is one control plane with the CRDs and cluster configuration of an OpenShift cluster on AWS.
type env struct {
	t    *testing.T
	cl   *cluster.Cluster
	kube kubernetes.Interface
	dyn  dynamic.Interface
	ops  operatorclient.Interface
	conf configclient.Interface
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if bins == nil {
		t.Skip("end-to-end tests need the control plane, which -short does not build")
	}
	ctx := t.Context()
	cl, err := cluster.Start(ctx, *bins, t.TempDir())
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{"kube-apiserver.log", "etcd.log"} {
				if b, err := os.ReadFile(filepath.Join(cl.Dir(), f)); err == nil && len(b) > 0 {
					tail := b[max(0, len(b)-4000):]
					t.Logf("last lines of %s:\n%s", f, tail)
				}
			}
		}
		cl.Stop()
	})
	e := &env{t: t, cl: cl}
	var errs [4]error
	e.kube, errs[0] = kubernetes.NewForConfig(cl.Config)
	e.dyn, errs[1] = dynamic.NewForConfig(cl.Config)
	e.ops, errs[2] = operatorclient.NewForConfig(cl.Config)
	e.conf, errs[3] = configclient.NewForConfig(cl.Config)
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatalf("clients for the test control plane: %v", err)
	}
	if err := cl.InstallCRDs(ctx, e.crdDocs()...); err != nil {
		t.Fatal(err)
	}
	e.createClusterConfig(opv1.CloudCredentialsModeDefault)
	return e
}

// crdDocs are the CRDs of an OpenShift cluster the operator needs (cluster.OpenShiftCRDs) and the SharedVolume
// CRD the operator ships.
func (e *env) crdDocs() [][]byte {
	e.t.Helper()
	docs, err := cluster.OpenShiftCRDs(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	sv, err := assets.Read(assets.SharedVolumeCRD)
	if err != nil {
		e.t.Fatal(err)
	}
	return append(docs, sv)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// createClusterConfig creates the namespaces and the cluster-scoped configuration the operator reads.
func (e *env) createClusterConfig(mode opv1.CloudCredentialsMode) {
	t, ctx := e.t, e.t.Context()
	t.Helper()
	for _, ns := range []string{namespace, ccoNamespace} {
		ok(e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))(e.t)
	}
	infra := ok(e.conf.ConfigV1().Infrastructures().Create(ctx, &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       configv1.InfrastructureSpec{PlatformSpec: configv1.PlatformSpec{Type: configv1.AWSPlatformType}},
	}, metav1.CreateOptions{}))(e.t)
	infra.Status = configv1.InfrastructureStatus{
		InfrastructureName: infraName, Platform: configv1.AWSPlatformType,
		ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
		APIServerURL: "https://api.e2e.example.com:6443", APIServerInternalURL: "https://api-int.e2e.example.com:6443",
		EtcdDiscoveryDomain: "",
		PlatformStatus: &configv1.PlatformStatus{Type: configv1.AWSPlatformType, AWS: &configv1.AWSPlatformStatus{
			Region: "us-east-1", ResourceTags: []configv1.AWSResourceTag{{Key: "team", Value: "storage"}}}},
	}
	ok(e.conf.ConfigV1().Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{}))(e.t)
	proxy := ok(e.conf.ConfigV1().Proxies().Create(ctx, &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: configv1.ProxySpec{HTTPSProxy: "http://proxy.e2e:3128"}}, metav1.CreateOptions{}))(e.t)
	proxy.Status = configv1.ProxyStatus{HTTPSProxy: "http://proxy.e2e:3128", NoProxy: ".cluster.local,169.254.169.254"}
	ok(e.conf.ConfigV1().Proxies().UpdateStatus(ctx, proxy, metav1.UpdateOptions{}))(e.t)
	ok(e.conf.ConfigV1().APIServers().Create(ctx, &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{}))(e.t)
	ok(e.ops.OperatorV1().CloudCredentials().Create(ctx, &opv1.CloudCredential{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: opv1.CloudCredentialSpec{OperatorSpec: opv1.OperatorSpec{ManagementState: opv1.Managed}, CredentialsMode: mode}}, metav1.CreateOptions{}))(e.t)
}

// ok returns a function that fails t on err and else returns v; call it as ok(f())(t).
func ok[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// setCredentialsMode switches the cloud-credential operator's mode.
func (e *env) setCredentialsMode(mode opv1.CloudCredentialsMode) {
	e.t.Helper()
	cc := ok(e.ops.OperatorV1().CloudCredentials().Get(e.t.Context(), "cluster", metav1.GetOptions{}))(e.t)
	cc.Spec.CredentialsMode = mode
	ok(e.ops.OperatorV1().CloudCredentials().Update(e.t.Context(), cc, metav1.UpdateOptions{}))(e.t)
}

// testConfig is the operator's start-up configuration in these tests.
func testConfig() config.Config {
	return config.Config{
		Namespace: namespace,
		Images: config.Images{
			Driver: "quay.io/e2e/aws-efs-csi-driver:v2", Provisioner: "quay.io/e2e/csi-external-provisioner:v2",
			NodeDriverRegistrar: "quay.io/e2e/csi-node-driver-registrar:v2", LivenessProbe: "quay.io/e2e/csi-livenessprobe:v2",
			KubeRBACProxy: "quay.io/e2e/kube-rbac-proxy:v2", Tools: "quay.io/e2e/tools:v2",
		},
		Version: "e2e",
	}
}

// runningOperator is an operator started in this process.
type runningOperator struct {
	cancel   context.CancelFunc
	done     chan error
	writes   *writeCounter
	missing  *gauge
	recorder events.Recorder
}

// startOperator runs the operator with cfg until the test ends or stop is called.
func (e *env) startOperator(cfg config.Config) *runningOperator {
	e.t.Helper()
	w := &writeCounter{}
	restCfg := rest.CopyConfig(e.cl.Config)
	restCfg.Wrap(w.wrap)
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningOperator{cancel: cancel, done: make(chan error, 1), writes: w, missing: &gauge{},
		recorder: events.NewInMemoryRecorder("aws-efs-csi-driver-operator", clock.RealClock{})}
	r.missing.v.Store(-1)
	go func() {
		r.done <- operator.Run(ctx, operator.Options{
			Config: cfg, KubeConfig: restCfg, Missing: r.missing, Resync: resync, Recorder: r.recorder,
		})
	}()
	e.t.Cleanup(r.stop)
	return r
}

func (r *runningOperator) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
	}
	r.cancel = nil
}

// gauge records the operator's ClusterCSIDriver-missing metric.
type gauge struct{ v atomic.Int64 }

func (g *gauge) Set(f float64) { g.v.Store(int64(f)) }

// writeCounter counts the operator's mutating requests.
type writeCounter struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.mu.Lock()
			w.writes = append(w.writes, req.Method+" "+req.URL.Path)
			w.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// since returns the writes after the first n.
func (w *writeCounter) since(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes[n:]...)
}

func (w *writeCounter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// eventually polls check until it returns nil or timeout passes, then fails with its last error.
func eventually(t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = check(t.Context()); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// createClusterCSIDriver creates the ClusterCSIDriver that makes the operator install the driver.
func (e *env) createClusterCSIDriver(state opv1.ManagementState) {
	e.t.Helper()
	ok(e.ops.OperatorV1().ClusterCSIDrivers().Create(e.t.Context(), &opv1.ClusterCSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: crName},
		Spec:       opv1.ClusterCSIDriverSpec{OperatorSpec: opv1.OperatorSpec{ManagementState: state, LogLevel: opv1.Normal, OperatorLogLevel: opv1.Normal}},
	}, metav1.CreateOptions{}))(e.t)
}

// setManagementState sets the ClusterCSIDriver's managementState, retrying when the operator wrote it meanwhile.
func (e *env) setManagementState(t *testing.T, state opv1.ManagementState) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cr, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(t.Context(), crName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cr.Spec.ManagementState = state
		_, err = e.ops.OperatorV1().ClusterCSIDrivers().Update(t.Context(), cr, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("setting managementState %s: %v", state, err)
	}
}

// condition returns the named condition of the ClusterCSIDriver.
func (e *env) condition(ctx context.Context, condType string) (opv1.OperatorCondition, error) {
	cr, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, crName, metav1.GetOptions{})
	if err != nil {
		return opv1.OperatorCondition{}, err
	}
	for _, c := range cr.Status.Conditions {
		if c.Type == condType {
			return c, nil
		}
	}
	var have []string
	for _, c := range cr.Status.Conditions {
		have = append(have, c.Type+"="+string(c.Status))
	}
	sort.Strings(have)
	return opv1.OperatorCondition{}, fmt.Errorf("no condition %s; have %s", condType, strings.Join(have, " "))
}

// credentialsRequest returns the named CredentialsRequest, or nil when it does not exist.
func (e *env) credentialsRequest(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	u, err := e.dyn.Resource(credentialsRequestGVR).Namespace(ccoNamespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// deleteClusterCSIDriver deletes the ClusterCSIDriver and waits until the operator has let it go.
func (e *env) deleteClusterCSIDriver() {
	e.t.Helper()
	// NotFound: a test that deleted it already and waits here until the uninstall completes.
	if err := e.ops.OperatorV1().ClusterCSIDrivers().Delete(e.t.Context(), crName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatal(err)
	}
	eventually(e.t, 90*time.Second, "ClusterCSIDriver deleted", func(ctx context.Context) error {
		cr, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, crName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there with finalizers %v", cr.Finalizers)
	})
}

// apiModuleDir is the module cache directory of github.com/openshift/api (cluster.APIModuleDir).
func apiModuleDir(t *testing.T) string {
	t.Helper()
	dir, err := cluster.APIModuleDir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
