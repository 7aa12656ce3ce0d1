package bundleinstall

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

const testNamespace = "openshift-cluster-csi-drivers"

// operatorDir is the operator module's directory, found from the repository root (the directory holding go.work)
// rather than by counting parents, so the test does not depend on where this package sits in the tree.
func operatorDir(t *testing.T) string {
	t.Helper()
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "operator")
}

// shippedBundle writes a bundle made of the operator's shipped CSV (plain YAML, the source ART and mage both
// consume), the other manifests beside it and the SharedVolume CRD, as `go tool mage bundle` lays it out, and
// reads it.
func shippedBundle(t *testing.T) *Bundle {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{
		"manifests/aws-efs-csi-driver-operator.clusterserviceversion.yaml": "csv.yaml",
		"manifests/aws-efs-csi-driver-operator-config.configmap.yaml":      "config.configmap.yaml",
		"manifests/aws-efs-csi-driver-operator-metrics-service.yaml":       "metrics-service.yaml",
		"assets/crds/aws-efs.managed.openshift.io_sharedvolumes.yaml":      "sharedvolumes.crd.yaml",
	}
	operator := operatorDir(t)
	for from, to := range sources {
		b, err := os.ReadFile(filepath.Join(operator, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifests", to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Read(dir)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return b
}

func TestObjectsOfShippedBundle(t *testing.T) {
	b := shippedBundle(t)
	objs, err := b.Objects(testNamespace)
	if err != nil {
		t.Fatal(err)
	}
	version, err := os.ReadFile(filepath.Join(operatorDir(t), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	csvName := "aws-efs-csi-driver-operator.v" + strings.TrimSpace(string(version))
	rbac := csvName + "-aws-efs-csi-driver-operator"
	var got []string
	for _, u := range objs {
		got = append(got, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
		if l := u.GetLabels(); l[LabelOwner] != csvName || l[LabelOwnerKind] != "ClusterServiceVersion" || l[LabelOwnerNamespace] != testNamespace {
			t.Errorf("%s %s: labels %v, want OLM's owner labels of %s", u.GetKind(), u.GetName(), l, csvName)
		}
	}
	want := []string{
		"CustomResourceDefinition /sharedvolumes.aws-efs.managed.openshift.io",
		"Namespace /" + testNamespace,
		"ServiceAccount " + testNamespace + "/aws-efs-csi-driver-operator",
		"Role " + testNamespace + "/" + rbac,
		"RoleBinding " + testNamespace + "/" + rbac,
		"ClusterRole /" + rbac,
		"ClusterRoleBinding /" + rbac,
		"ConfigMap " + testNamespace + "/aws-efs-csi-driver-operator-config",
		"Service " + testNamespace + "/aws-efs-csi-driver-operator-metrics",
		"Deployment " + testNamespace + "/aws-efs-csi-driver-operator",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("objects:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	strategy := b.CSV.Spec.InstallStrategy.StrategySpec
	var role rbacv1.Role
	fromUnstructured(t, objs[3], &role)
	if !reflect.DeepEqual(role.Rules, strategy.Permissions[0].Rules) {
		t.Errorf("Role rules differ from the CSV's permissions:\n got %v\nwant %v", role.Rules, strategy.Permissions[0].Rules)
	}
	var crole rbacv1.ClusterRole
	fromUnstructured(t, objs[5], &crole)
	if !reflect.DeepEqual(crole.Rules, strategy.ClusterPermissions[0].Rules) {
		t.Errorf("ClusterRole rules differ from the CSV's clusterPermissions")
	}
	for _, i := range []int{4, 6} {
		var binding rbacv1.ClusterRoleBinding // RoleBinding has the same subjects and roleRef fields
		fromUnstructured(t, objs[i], &binding)
		wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "aws-efs-csi-driver-operator", Namespace: testNamespace}}
		if !reflect.DeepEqual(binding.Subjects, wantSubjects) || binding.RoleRef.Name != rbac || binding.RoleRef.Kind != strings.TrimSuffix(objs[i].GetKind(), "Binding") {
			t.Errorf("%s: subjects %v roleRef %v; want %v bound to %s %s", objs[i].GetKind(), binding.Subjects, binding.RoleRef, wantSubjects, strings.TrimSuffix(objs[i].GetKind(), "Binding"), rbac)
		}
	}
	dep := objs[len(objs)-1]
	image, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	c, _ := image[0].(map[string]any)
	var operatorImage string
	for _, ri := range b.CSV.Spec.RelatedImages {
		if ri.Name == "aws-efs-csi-driver-operator" {
			operatorImage = ri.Image
		}
	}
	if operatorImage == "" || !strings.Contains(operatorImage, "@sha256:") || c["image"] != operatorImage {
		t.Errorf("Deployment image %v; want the CSV's pinned related image aws-efs-csi-driver-operator %q", c["image"], operatorImage)
	}
	if sa, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "spec", "serviceAccountName"); sa != "aws-efs-csi-driver-operator" {
		t.Errorf("Deployment runs as %q", sa)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(dep.Object, "metadata", "creationTimestamp"); found {
		t.Error("Deployment carries a creationTimestamp, which server-side apply refuses to own")
	}
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatal(err)
	}
}

func TestObjectsRefuses(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Bundle)
		want   string
	}{
		{"a kind OLM does not install", func(b *Bundle) {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apps/v1")
			u.SetKind("DaemonSet")
			u.SetName("extra")
			b.Manifests = append(b.Manifests, u)
		}, `bundle manifest DaemonSet "extra": OLM does not install this kind`},
		{"no AllNamespaces install mode", func(b *Bundle) {
			b.CSV.Spec.InstallModes = []v1alpha1.InstallMode{{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true}}
		}, "install mode AllNamespaces not supported"},
		{"another install strategy", func(b *Bundle) {
			b.CSV.Spec.InstallStrategy.StrategyName = "helm"
		}, `install strategy "helm", want "deployment"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := shippedBundle(t)
			tc.change(b)
			_, err := b.Objects(testNamespace)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Objects error %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRBACNameWhenAServiceAccountHasSeveralEntries(t *testing.T) {
	perms := []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "a"}, {ServiceAccountName: "b"}, {ServiceAccountName: "a"}}
	got := []string{rbacName("csv", "a", 0, perms), rbacName("csv", "b", 1, perms), rbacName("csv", "a", 2, perms)}
	want := []string{"csv-a-0", "csv-b", "csv-a-2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
}

func TestReadRefuses(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no CSV", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}, "no ClusterServiceVersion"},
		{"two CSVs", map[string]string{
			"a.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: a\n",
			"b.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: b\n",
		}, "two ClusterServiceVersions (a and b)"},
		{"not YAML", map[string]string{"bad.yaml": "kind: [unclosed\n"}, "bad.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, "manifests", name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Read(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read error %v; want it to contain %q", err, tc.want)
			}
		})
	}
}
