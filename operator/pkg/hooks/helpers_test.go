package hooks

import (
	"maps"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
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

// withLibraryGo returns values with library-go's placeholders added, as library-go hands the workloads to the
// workload hooks.
func withLibraryGo(values map[string]string) map[string]string {
	out := maps.Clone(values)
	maps.Copy(out, libraryGoValues)
	return out
}

// render renders the manifest name with values and parses it into a T.
func render[T any](t *testing.T, name string, values map[string]string) *T {
	t.Helper()
	b, err := assets.Render(name, values)
	if err != nil {
		t.Fatal(err)
	}
	obj := new(T)
	if err := yaml.Unmarshal(b, obj); err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	return obj
}

// filledDaemonSet returns the node DaemonSet as library-go hands it to the workload hooks: the start-up
// placeholders and library-go's own filled.
func filledDaemonSet(t *testing.T) *appsv1.DaemonSet {
	return render[appsv1.DaemonSet](t, assets.NodeDaemonSet, withLibraryGo(testValues))
}

// shippedDeployment returns the controller Deployment exactly as shipped, with the start-up placeholders filled.
func shippedDeployment(t *testing.T) *appsv1.Deployment {
	return render[appsv1.Deployment](t, assets.ControllerDeployment, testValues)
}

// shippedDaemonSet returns the node DaemonSet exactly as shipped, with the start-up placeholders filled.
func shippedDaemonSet(t *testing.T) *appsv1.DaemonSet {
	return render[appsv1.DaemonSet](t, assets.NodeDaemonSet, testValues)
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
