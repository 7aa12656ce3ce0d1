package assets

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// filledLater are the placeholders library-go's manifest hooks fill on every sync.
var filledLater = []string{"${LOG_LEVEL}", "${CLUSTER_ID}", "${TLS_CIPHER_SUITES}", "${TLS_MIN_VERSION}",
	"${LEADER_ELECTION_LEASE_DURATION}", "${LEADER_ELECTION_RENEW_DEADLINE}", "${LEADER_ELECTION_RETRY_PERIOD}"}

var filledAtStart = []string{Namespace, DriverImage, ProvisionerImage, NodeDriverRegistrarImage, LivenessProbeImage, KubeRBACProxyImage, ToolsImage}

// TestInventory pins every object the driver install consists of: kind, name and namespace. They match the
// objects of OpenShift's own EFS operator so that an existing installation is adopted in place.
func TestInventory(t *testing.T) {
	want := map[string]string{
		"driver/cabundle_cm.yaml":                              "ConfigMap ${NAMESPACE}/aws-efs-csi-driver-trusted-ca-bundle",
		"driver/controller.yaml":                               "Deployment ${NAMESPACE}/aws-efs-csi-driver-controller",
		"driver/controller_pdb.yaml":                           "PodDisruptionBudget ${NAMESPACE}/aws-efs-csi-driver-controller-pdb",
		"driver/controller_privileged_binding.yaml":            "ClusterRoleBinding /efs-controller-privileged-binding",
		"driver/controller_sa.yaml":                            "ServiceAccount ${NAMESPACE}/aws-efs-csi-driver-controller-sa",
		"driver/credentials-node.yaml":                         "CredentialsRequest openshift-cloud-credential-operator/openshift-aws-efs-csi-driver-node",
		"driver/credentials.yaml":                              "CredentialsRequest openshift-cloud-credential-operator/openshift-aws-efs-csi-driver",
		"driver/csidriver.yaml":                                "CSIDriver /efs.csi.aws.com",
		"driver/kube_rbac_proxy_binding.yaml":                  "ClusterRoleBinding /efs-kube-rbac-proxy-binding",
		"driver/kube_rbac_proxy_role.yaml":                     "ClusterRole /efs-kube-rbac-proxy-role",
		"driver/lease_leader_election_binding.yaml":            "RoleBinding ${NAMESPACE}/aws-efs-csi-driver-lease-leader-election",
		"driver/lease_leader_election_role.yaml":               "Role ${NAMESPACE}/aws-efs-csi-driver-lease-leader-election",
		"driver/main_provisioner_binding.yaml":                 "ClusterRoleBinding /efs-csi-main-provisioner-binding",
		"driver/node.yaml":                                     "DaemonSet ${NAMESPACE}/aws-efs-csi-driver-node",
		"driver/node_privileged_binding.yaml":                  "ClusterRoleBinding /efs-node-privileged-binding",
		"driver/node_reader_binding.yaml":                      "ClusterRoleBinding /efs-node-reader-binding",
		"driver/node_reader_role.yaml":                         "ClusterRole /efs-node-reader-role",
		"driver/node_sa.yaml":                                  "ServiceAccount ${NAMESPACE}/aws-efs-csi-driver-node-sa",
		"driver/privileged_role.yaml":                          "ClusterRole /efs-privileged-role",
		"driver/prometheus_role.yaml":                          "Role ${NAMESPACE}/aws-efs-csi-driver-prometheus",
		"driver/prometheus_rolebinding.yaml":                   "RoleBinding ${NAMESPACE}/aws-efs-csi-driver-prometheus",
		"driver/service.yaml":                                  "Service ${NAMESPACE}/aws-efs-csi-driver-controller-metrics",
		"driver/servicemonitor.yaml":                           "ServiceMonitor ${NAMESPACE}/aws-efs-csi-driver-controller-monitor",
		"operator/prometheus_role.yaml":                        "Role ${NAMESPACE}/aws-efs-csi-driver-operator-prometheus",
		"operator/prometheus_rolebinding.yaml":                 "RoleBinding ${NAMESPACE}/aws-efs-csi-driver-operator-prometheus",
		"operator/prometheusrule.yaml":                         "PrometheusRule ${NAMESPACE}/aws-efs-csi-driver-operator",
		"operator/servicemonitor.yaml":                         "ServiceMonitor ${NAMESPACE}/aws-efs-csi-driver-operator-monitor",
		"crds/aws-efs.managed.openshift.io_sharedvolumes.yaml": "CustomResourceDefinition /sharedvolumes.aws-efs.managed.openshift.io",
	}
	got := map[string]string{}
	for _, dir := range []string{"driver", "operator", "crds"} {
		names, err := List(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			b, err := Read(n)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(b, &u.Object); err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			got[n] = u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
			for _, p := range Placeholders(b) {
				if !slices.Contains(filledAtStart, p) && !slices.Contains(filledLater, p) {
					t.Errorf("%s uses placeholder %s that nothing fills", n, p)
				}
			}
		}
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s = %q, want %q", n, got[n], w)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("asset %s is not in the inventory of this test", n)
		}
	}
}

func TestDriverStaticsExcludeControlledObjects(t *testing.T) {
	statics, err := DriverStatics()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{ControllerDeployment, NodeDaemonSet, CredentialsRequest, NodeCredentialsRequest} {
		if slices.Contains(statics, n) {
			t.Errorf("DriverStatics contains %s, which has its own controller", n)
		}
	}
	if !slices.Contains(statics, "driver/csidriver.yaml") || !slices.Contains(statics, ServiceMonitor) {
		t.Errorf("DriverStatics = %v, missing the CSIDriver or ServiceMonitor", statics)
	}
}

func TestRenderFillsOnlyGivenPlaceholders(t *testing.T) {
	b, err := Render(ControllerDeployment, map[string]string{Namespace: "ns-x", DriverImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	ps := Placeholders(b)
	if slices.Contains(ps, Namespace) || slices.Contains(ps, DriverImage) {
		t.Fatalf("placeholders left after Render: %v", ps)
	}
	if !slices.Contains(ps, "${LOG_LEVEL}") || !slices.Contains(ps, ToolsImage) {
		t.Fatalf("Render filled placeholders it was not given: %v", ps)
	}
	if _, err := Read("driver/nope.yaml"); err == nil {
		t.Fatal("Read of a missing asset: want an error")
	}
}

// The controller's csi-driver mounts file system roots with tls,iam for --delete-access-point-root-dir. efs-utils
// reads IAM credentials from root's ~/.aws, ECS, web identity variables or IMDS, none of which holds the
// cloud-credential operator's secret; AWS_PROFILE names the profile botocore then reads from AWS_CONFIG_FILE.
func TestControllerGivesEFSUtilsTheDriverCredentials(t *testing.T) {
	b, err := Read(ControllerDeployment)
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "csi-driver" {
			continue
		}
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		if !slices.Contains(c.Args, "--delete-access-point-root-dir=true") {
			t.Errorf("csi-driver args %v: want --delete-access-point-root-dir=true (OpenShift's default)", c.Args)
		}
		if env["AWS_PROFILE"] != "default" || env["AWS_CONFIG_FILE"] != "/var/run/aws/auth/credentials" {
			t.Errorf("csi-driver env %v: want AWS_PROFILE=default and AWS_CONFIG_FILE=/var/run/aws/auth/credentials", env)
		}
		return
	}
	t.Fatal("no csi-driver container in the controller Deployment")
}
