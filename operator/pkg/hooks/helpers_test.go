package hooks

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/operator/resource/resourceread"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

const testNamespace = "openshift-cluster-csi-drivers"

// testValues fills the placeholders the operator itself fills at start-up.
var testValues = map[string]string{
	assets.Namespace:                testNamespace,
	assets.DriverImage:              "quay.io/test/driver:1",
	assets.ProvisionerImage:         "quay.io/test/provisioner:1",
	assets.NodeDriverRegistrarImage: "quay.io/test/registrar:1",
	assets.LivenessProbeImage:       "quay.io/test/liveness:1",
	assets.KubeRBACProxyImage:       "quay.io/test/proxy:1",
	assets.ToolsImage:               "quay.io/test/tools:1",
}

// libraryGoValues are what library-go's manifest hooks fill before the workload hooks run.
var libraryGoValues = map[string]string{
	"${LOG_LEVEL}":                      "2",
	"${CLUSTER_ID}":                     "c-1",
	"${TLS_CIPHER_SUITES}":              "TLS_AES_128_GCM_SHA256",
	"${TLS_MIN_VERSION}":                "VersionTLS12",
	"${LEADER_ELECTION_LEASE_DURATION}": "137s",
	"${LEADER_ELECTION_RENEW_DEADLINE}": "107s",
	"${LEADER_ELECTION_RETRY_PERIOD}":   "26s",
}

// filledDaemonSet returns the node DaemonSet as library-go hands it to the workload hooks: the start-up
// placeholders and library-go's own filled.
func filledDaemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	values := map[string]string{}
	for _, m := range []map[string]string{testValues, libraryGoValues} {
		for k, v := range m {
			values[k] = v
		}
	}
	b, err := assets.Render(assets.NodeDaemonSet, values)
	if err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{}
	if err := yaml.Unmarshal(b, ds); err != nil {
		t.Fatalf("parsing %s: %v", assets.NodeDaemonSet, err)
	}
	return ds
}

// shippedDeployment returns the controller Deployment exactly as shipped, with the start-up placeholders filled.
func shippedDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	b, err := assets.Render(assets.ControllerDeployment, testValues)
	if err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	if err := yaml.Unmarshal(b, d); err != nil {
		t.Fatalf("parsing %s: %v", assets.ControllerDeployment, err)
	}
	return d
}

// shippedDaemonSet returns the node DaemonSet exactly as shipped, with the start-up placeholders filled.
func shippedDaemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	b, err := assets.Render(assets.NodeDaemonSet, testValues)
	if err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{}
	if err := yaml.Unmarshal(b, ds); err != nil {
		t.Fatalf("parsing %s: %v", assets.NodeDaemonSet, err)
	}
	// resourceread is what library-go uses; make sure it accepts the asset too.
	_ = resourceread.ReadDaemonSetV1OrDie
	return ds
}

func envOf(t *testing.T, spec *corev1.PodSpec, containerName, name string) (string, bool) {
	t.Helper()
	c := container(spec, containerName)
	if c == nil {
		t.Fatalf("no container %q", containerName)
	}
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

func argsWithPrefix(t *testing.T, spec *corev1.PodSpec, containerName, prefix string) []string {
	t.Helper()
	c := container(spec, containerName)
	if c == nil {
		t.Fatalf("no container %q", containerName)
	}
	var out []string
	for _, a := range c.Args {
		if len(a) >= len(prefix) && a[:len(prefix)] == prefix {
			out = append(out, a)
		}
	}
	return out
}

func infrastructure(name string, topology configv1.TopologyMode, tags ...configv1.AWSResourceTag) *configv1.Infrastructure {
	return &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Status: configv1.InfrastructureStatus{
			InfrastructureName:   name,
			ControlPlaneTopology: topology,
			PlatformStatus: &configv1.PlatformStatus{
				Type: configv1.AWSPlatformType,
				AWS:  &configv1.AWSPlatformStatus{Region: "us-east-1", ResourceTags: tags},
			},
		},
	}
}

var managedSpec = &opv1.OperatorSpec{ManagementState: opv1.Managed}

func assetsRender(name string) ([]byte, error) { return assets.Render(name, testValues) }
