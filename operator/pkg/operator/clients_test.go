package operator

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/openshift/aws-efs-csi/operator/assets"
	"github.com/openshift/aws-efs-csi/operator/pkg/config"
)

func TestExtractorsReadOnlyTheFieldManagersFields(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "ClusterCSIDriver",
		"metadata": map[string]any{"name": ClusterCSIDriverName, "managedFields": []any{
			map[string]any{"manager": "op", "operation": "Apply", "apiVersion": "operator.openshift.io/v1", "subresource": "status",
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:status": map[string]any{"f:readyReplicas": map[string]any{}}}},
		}},
		"spec":   map[string]any{"managementState": "Managed", "logLevel": "Debug"},
		"status": map[string]any{"readyReplicas": int64(1), "latestAvailableRevision": int64(3)},
	}}
	st, err := extractStatus(obj, "op")
	if err != nil {
		t.Fatal(err)
	}
	if st == nil || st.ReadyReplicas == nil || *st.ReadyReplicas != 1 || st.LatestAvailableRevision != nil {
		t.Fatalf("extractStatus = %+v, want only the manager's readyReplicas", st)
	}
	spec, err := extractSpec(obj, "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	if spec != nil && spec.ManagementState != nil {
		t.Fatalf("extractSpec for a manager without spec fields = %+v", spec)
	}
	if _, err := extractSpec(&unstructured.Unstructured{Object: map[string]any{"spec": "not an object"}}, "op"); err == nil {
		t.Fatal("extractSpec of a malformed object: want an error")
	}
}

func TestPlaceholderValuesFillEveryStartUpPlaceholder(t *testing.T) {
	opts := Options{Config: config.Config{Namespace: "ns", Images: config.Images{
		Driver: "d", Provisioner: "p", NodeDriverRegistrar: "r", LivenessProbe: "l", KubeRBACProxy: "k", Tools: "t"}}}
	values := placeholderValues(opts)
	for _, name := range []string{assets.ControllerDeployment, assets.NodeDaemonSet, assets.CredentialsRequest} {
		b, err := assets.Render(name, values)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range assets.Placeholders(b) {
			if _, filled := values[p]; filled {
				t.Errorf("%s: %s left after rendering", name, p)
			}
			if slices.Contains([]string{assets.Namespace, assets.DriverImage, assets.ToolsImage}, p) {
				t.Errorf("%s: start-up placeholder %s not filled", name, p)
			}
		}
	}
	if opts.resync() == 0 {
		t.Fatal("default resync is zero")
	}
}
