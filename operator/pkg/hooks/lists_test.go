package hooks

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"github.com/openshift/library-go/pkg/operator/csi/csidrivercontrollerservicecontroller"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

const crName = "efs.csi.aws.com"

// fixture holds informers whose caches the test fills directly.
type fixture struct {
	in     Inputs
	kube   informers.SharedInformerFactory
	config configinformers.SharedInformerFactory
	ops    operatorinformers.SharedInformerFactory
	legacy informers.SharedInformerFactory
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rbac, rbacObjects := shippedRBAC(t)
	// Every hook list test runs with the driver's RBAC applied, as after the static resources controller's first pass.
	kube, cluster := informersHolding(t, rbacObjects)
	f := &fixture{
		kube:   kube,
		config: configinformers.NewSharedInformerFactory(configfake.NewClientset(), 0),
		ops:    operatorinformers.NewSharedInformerFactory(operatorfake.NewClientset(), 0),
		legacy: informers.NewSharedInformerFactory(kubefake.NewClientset(), 0),
	}
	f.in = Inputs{
		Namespace:                  testNamespace,
		ClusterCSIDriverName:       crName,
		Kube:                       f.kube,
		ClusterKube:                cluster,
		RBAC:                       rbac,
		Config:                     f.config,
		ClusterCSIDrivers:          f.ops.Operator().V1().ClusterCSIDrivers().Lister(),
		ClusterCSIDriverInformer:   f.ops.Operator().V1().ClusterCSIDrivers().Informer(),
		CommunityDaemonSets:        f.legacy.Apps().V1().DaemonSets().Lister(),
		CommunityDaemonSetInformer: f.legacy.Apps().V1().DaemonSets().Informer(),
		CommunityPods:              f.legacy.Core().V1().Pods().Lister(),
		CommunityPodInformer:       f.legacy.Core().V1().Pods().Informer(),
	}
	return f
}

func (f *fixture) add(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.ConfigMap:
			err = f.kube.Core().V1().ConfigMaps().Informer().GetIndexer().Add(o)
		case *corev1.Secret:
			err = f.kube.Core().V1().Secrets().Informer().GetIndexer().Add(o)
		case *configv1.Infrastructure:
			err = f.config.Config().V1().Infrastructures().Informer().GetIndexer().Add(o)
		case *opv1.ClusterCSIDriver:
			err = f.ops.Operator().V1().ClusterCSIDrivers().Informer().GetIndexer().Add(o)
		case *appsv1.DaemonSet:
			err = f.legacy.Apps().V1().DaemonSets().Informer().GetIndexer().Add(o)
		default:
			t.Fatalf("fixture cannot hold %T", o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func caBundle() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: TrustedCABundleConfigMap, Namespace: testNamespace},
		Data: map[string]string{"ca-bundle.crt": "-----BEGIN CERTIFICATE-----\n"}}
}

func secret(name, value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Data: map[string][]byte{"credentials": []byte(value)}}
}

func clusterCSIDriver(metrics *opv1.AWSEFSVolumeMetrics) *opv1.ClusterCSIDriver {
	return &opv1.ClusterCSIDriver{ObjectMeta: metav1.ObjectMeta{Name: crName},
		Spec: opv1.ClusterCSIDriverSpec{
			OperatorSpec: opv1.OperatorSpec{ManagementState: opv1.Managed},
			DriverConfig: opv1.CSIDriverConfigSpec{DriverType: opv1.AWSDriverType, AWS: &opv1.AWSCSIDriverConfigSpec{EFSVolumeMetrics: metrics}},
		}}
}

// observedProxy is the observed config the CSI config observer writes for a cluster-wide proxy.
func observedProxy() *opv1.OperatorSpec {
	return &opv1.OperatorSpec{ManagementState: opv1.Managed, ObservedConfig: runtime.RawExtension{
		Raw: []byte(`{"targetcsiconfig":{"proxy":{"HTTPS_PROXY":"http://proxy:3128","NO_PROXY":".cluster.local"}}}`)}}
}

func hasMount(c *corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

func depAnnotations(a map[string]string) []string {
	var out []string
	for k := range a {
		if strings.HasPrefix(k, "operator.openshift.io/dep-") {
			out = append(out, k)
		}
	}
	return out
}

func TestDeploymentHookList(t *testing.T) {
	f := newFixture(t)
	f.add(t, caBundle(), secret(ControllerCredentialsSecret, "a"), secret(MetricsServingCertSecret, "b"),
		infrastructure("c-1", configv1.HighlyAvailableTopologyMode, configv1.AWSResourceTag{Key: "team", Value: "storage"}))
	f.in.FIPSEnabled = true
	hooks, infs := Deployment(f.in)
	if len(infs) == 0 {
		t.Fatal("Deployment hooks declare no informers")
	}
	d := shippedDeployment(t)
	for i, h := range hooks {
		if err := h(observedProxy(), d); err != nil {
			t.Fatalf("hook %d: %v", i, err)
		}
	}
	spec := &d.Spec.Template.Spec
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2 on a HighlyAvailable control plane", d.Spec.Replicas)
	}
	if v, _ := envOf(t, spec, DriverContainer, "HTTPS_PROXY"); v != "http://proxy:3128" {
		t.Errorf("driver HTTPS_PROXY = %q, want the observed proxy", v)
	}
	if _, ok := envOf(t, spec, "csi-provisioner", "HTTPS_PROXY"); ok {
		t.Error("proxy injected into csi-provisioner; want only containers named by config.openshift.io/inject-proxy")
	}
	if !hasMount(container(spec, DriverContainer), "/etc/pki/ca-trust/extracted/pem") {
		t.Error("trusted CA bundle not mounted into the driver container")
	}
	if v, _ := envOf(t, spec, DriverContainer, EnvFIPSEnabled); v != "true" {
		t.Errorf("FIPS_ENABLED = %q", v)
	}
	if got := argsWithPrefix(t, spec, DriverContainer, "--tags="); len(got) != 1 || got[0] != "--tags=team:storage kubernetes.io/cluster/c-1:owned" {
		t.Errorf("--tags = %q", got)
	}
	// Two secrets and the CA bundle ConfigMap, on both the Deployment and its template.
	if n := len(depAnnotations(d.Annotations)); n != 3 {
		t.Errorf("Deployment has %d dep- annotations %v, want 3", n, depAnnotations(d.Annotations))
	}
	if n := len(depAnnotations(d.Spec.Template.Annotations)); n != 3 {
		t.Errorf("pod template has %d dep- annotations, want 3", n)
	}

	// A changed credentials secret changes the template, which rolls the pods.
	before := d.Spec.Template.Annotations
	f.add(t, secret(ControllerCredentialsSecret, "rotated"))
	d2 := shippedDeployment(t)
	for _, h := range hooks {
		if err := h(observedProxy(), d2); err != nil {
			t.Fatal(err)
		}
	}
	changed := 0
	for k, v := range d2.Spec.Template.Annotations {
		if before[k] != v {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d template annotations changed after rotating %s, want 1", changed, ControllerCredentialsSecret)
	}
}

func TestDeploymentHookListWithoutOptionalInputs(t *testing.T) {
	f := newFixture(t)
	f.add(t, infrastructure("c-1", configv1.SingleReplicaTopologyMode))
	hooks, _ := Deployment(f.in)
	d := shippedDeployment(t)
	for i, h := range hooks {
		if err := h(managedSpec, d); err != nil {
			t.Fatalf("hook %d with no CA bundle, secrets or proxy: %v", i, err)
		}
	}
	if *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %d, want 1 on a single-replica control plane", *d.Spec.Replicas)
	}
	if hasMount(container(&d.Spec.Template.Spec, DriverContainer), "/etc/pki/ca-trust/extracted/pem") {
		t.Error("CA bundle mounted while the ConfigMap does not exist")
	}
	if _, ok := envOf(t, &d.Spec.Template.Spec, DriverContainer, "HTTPS_PROXY"); ok {
		t.Error("proxy set without an observed proxy")
	}
}

func TestDeploymentHookListNeedsInfrastructure(t *testing.T) {
	hooks, _ := Deployment(newFixture(t).in)
	var errs []string
	d := shippedDeployment(t)
	for _, h := range hooks {
		if err := h(managedSpec, d); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), `"cluster"`) {
		t.Fatalf("hooks without an Infrastructure: errors %q, want one naming Infrastructure \"cluster\"", errs)
	}
}

func TestDaemonSetHookList(t *testing.T) {
	f := newFixture(t)
	metrics := &opv1.AWSEFSVolumeMetrics{State: opv1.AWSEFSVolumeMetricsRecursiveWalk,
		RecursiveWalk: &opv1.AWSEFSVolumeMetricsRecursiveWalkConfig{RefreshPeriodMinutes: 60, FSRateLimit: 10}}
	infra := infrastructure("c-1", configv1.HighlyAvailableTopologyMode)
	infra.Status.PlatformStatus.AWS.ServiceEndpoints = []configv1.AWSServiceEndpoint{{Name: "ec2", URL: "https://ec2.example.internal"}}
	f.add(t, caBundle(), secret(NodeCredentialsSecret, "n"), clusterCSIDriver(metrics), infra)
	hooks, infs := DaemonSet(f.in)
	if len(infs) == 0 {
		t.Fatal("DaemonSet hooks declare no informers")
	}
	ds := filledDaemonSet(t)
	for i, h := range hooks {
		if err := h(observedProxy(), ds); err != nil {
			t.Fatalf("hook %d: %v", i, err)
		}
	}
	spec := &ds.Spec.Template.Spec
	if !hasMount(container(spec, DriverContainer), "/etc/pki/ca-trust/extracted/pem") {
		t.Error("trusted CA bundle not mounted into the node driver")
	}
	if _, ok := envOf(t, spec, DriverContainer, "HTTPS_PROXY"); ok {
		t.Error("proxy env on node pods; the DaemonSet gets the CA bundle only")
	}
	if got := argsWithPrefix(t, spec, DriverContainer, "--vol-metrics-"); len(got) != 3 {
		t.Errorf("volume metrics args = %q, want 3", got)
	}
	if v, _ := envOf(t, spec, DriverContainer, EnvFIPSEnabled); v != "false" {
		t.Errorf("FIPS_ENABLED = %q, want false", v)
	}
	if n := len(depAnnotations(ds.Spec.Template.Annotations)); n != 2 {
		t.Errorf("template dep- annotations = %d, want 2 (node secret, CA bundle)", n)
	}
	if spec.DNSPolicy != corev1.DNSDefault {
		t.Errorf("dnsPolicy = %q", spec.DNSPolicy)
	}
	if v, _ := envOf(t, spec, DriverContainer, "AWS_ENDPOINT_URL_EC2"); v != "https://ec2.example.internal" {
		t.Errorf("AWS_ENDPOINT_URL_EC2 = %q, want the Infrastructure's ec2 endpoint", v)
	}
}

func TestLogLevelReachesEveryContainer(t *testing.T) {
	f := newFixture(t)
	f.add(t, infrastructure("c-1", ""))
	b, err := renderShipped("driver/controller.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		level opv1.LogLevel
		want  string
	}{
		{opv1.Normal, "--v=2"}, {opv1.Debug, "--v=4"}, {opv1.Trace, "--v=6"}, {opv1.TraceAll, "--v=8"}, {"", "--v=2"},
	}
	for _, tc := range tests {
		spec := &opv1.OperatorSpec{ManagementState: opv1.Managed, LogLevel: tc.level}
		out, err := csidrivercontrollerservicecontroller.WithPlaceholdersHook(f.config)(spec, b)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "${LOG_LEVEL}") {
			t.Fatalf("log level %q: placeholder left", tc.level)
		}
		if n := strings.Count(string(out), tc.want); n != 3 {
			t.Errorf("log level %q: %q appears %d times, want 3 (driver, provisioner, liveness probe)", tc.level, tc.want, n)
		}
	}
}

func renderShipped(name string) ([]byte, error) {
	return assetsRender(name)
}
