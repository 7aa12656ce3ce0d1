package bundleinstall

import (
	"fmt"
	"sort"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Labels OLM puts on what it creates for a CSV; uninstall and audit checks select by them.
const (
	LabelOwner          = "olm.owner"
	LabelOwnerKind      = "olm.owner.kind"
	LabelOwnerNamespace = "olm.owner.namespace"
)

// bundleKinds are the kinds OLM accepts among a registry+v1 bundle's manifests besides the CSV, and whether they
// are cluster-scoped; OLM refuses a bundle holding any other kind, and so does Objects.
var bundleKinds = map[string]bool{
	"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true, "PriorityClass": true,
	"ConsoleYAMLSample": true, "ConsoleQuickStart": true, "ConsoleCLIDownload": true, "ConsoleLink": true,
	"Secret": false, "ConfigMap": false, "ServiceAccount": false, "Service": false, "Role": false,
	"RoleBinding": false, "PrometheusRule": false, "ServiceMonitor": false, "PodDisruptionBudget": false,
	"VerticalPodAutoscaler": false,
}

// Objects are the objects OLM creates when it installs the bundle into namespace for all namespaces, in the order
// they can be applied: CRDs, the namespace, ServiceAccounts, Roles and RoleBindings of the CSV's permissions,
// ClusterRoles and ClusterRoleBindings of its clusterPermissions, the other manifests, then the Deployments of
// the install strategy. Every object carries OLM's owner labels. What OLM adds besides (owner references, the
// CSV's annotations and the OperatorGroup's on pod templates, OperatorConditions) is left out: the operator reads
// none of it.
func (b *Bundle) Objects(namespace string) ([]*unstructured.Unstructured, error) {
	csv := b.CSV
	if csv.Spec.InstallStrategy.StrategyName != v1alpha1.InstallStrategyNameDeployment {
		return nil, fmt.Errorf("CSV %s: install strategy %q, want %q", csv.Name, csv.Spec.InstallStrategy.StrategyName, v1alpha1.InstallStrategyNameDeployment)
	}
	if !supportsAllNamespaces(csv) {
		return nil, fmt.Errorf("CSV %s: install mode AllNamespaces not supported; this installer installs for all namespaces only", csv.Name)
	}
	strategy := csv.Spec.InstallStrategy.StrategySpec
	labels := map[string]string{LabelOwner: csv.Name, LabelOwnerKind: v1alpha1.ClusterServiceVersionKind, LabelOwnerNamespace: namespace}
	var crds, others, out []*unstructured.Unstructured
	for _, m := range b.Manifests {
		clusterScoped, ok := bundleKinds[m.GetKind()]
		if !ok {
			return nil, fmt.Errorf("bundle manifest %s %q: OLM does not install this kind from a bundle", m.GetKind(), m.GetName())
		}
		u := m.DeepCopy()
		if !clusterScoped {
			u.SetNamespace(namespace)
		}
		if u.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, u)
		} else {
			others = append(others, u)
		}
	}
	out = append(out, crds...)
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := appendTyped(&out, ns); err != nil {
		return nil, err
	}
	for _, sa := range serviceAccounts(strategy) {
		if err := appendTyped(&out, &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: namespace},
		}); err != nil {
			return nil, err
		}
	}
	for i, p := range strategy.Permissions {
		name := rbacName(csv.Name, p.ServiceAccountName, i, strategy.Permissions)
		subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: p.ServiceAccountName, Namespace: namespace}}
		role := &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Rules: p.Rules}
		binding := &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
		if err := appendTyped(&out, role, binding); err != nil {
			return nil, err
		}
	}
	for i, p := range strategy.ClusterPermissions {
		name := rbacName(csv.Name, p.ServiceAccountName, i, strategy.ClusterPermissions)
		subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: p.ServiceAccountName, Namespace: namespace}}
		role := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: p.Rules}
		binding := &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
		if err := appendTyped(&out, role, binding); err != nil {
			return nil, err
		}
	}
	out = append(out, others...)
	for _, d := range strategy.DeploymentSpecs {
		dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: namespace, Labels: d.Label}, Spec: *d.Spec.DeepCopy()}
		if err := appendTyped(&out, dep); err != nil {
			return nil, err
		}
	}
	for _, u := range out {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		for k, v := range labels {
			l[k] = v
		}
		u.SetLabels(l)
	}
	return out, nil
}

func supportsAllNamespaces(csv *v1alpha1.ClusterServiceVersion) bool {
	for _, m := range csv.Spec.InstallModes {
		if m.Type == v1alpha1.InstallModeTypeAllNamespaces {
			return m.Supported
		}
	}
	return false
}

// serviceAccounts are the ServiceAccounts the install strategy names, sorted: those of its permissions and
// clusterPermissions and those its Deployments run as.
func serviceAccounts(s v1alpha1.StrategyDetailsDeployment) []string {
	set := map[string]bool{}
	for _, p := range append(append([]v1alpha1.StrategyDeploymentPermissions{}, s.Permissions...), s.ClusterPermissions...) {
		set[p.ServiceAccountName] = true
	}
	for _, d := range s.DeploymentSpecs {
		if sa := d.Spec.Template.Spec.ServiceAccountName; sa != "" {
			set[sa] = true
		}
	}
	var out []string
	for sa := range set {
		out = append(out, sa)
	}
	sort.Strings(out)
	return out
}

// rbacName names the role and binding of permission i: <csv>-<service account>, with the index appended when
// the service account has more than one entry. (OLM appends a random suffix instead; the names are not read.)
func rbacName(csv, sa string, i int, all []v1alpha1.StrategyDeploymentPermissions) string {
	n := 0
	for _, p := range all {
		if p.ServiceAccountName == sa {
			n++
		}
	}
	if n > 1 {
		return fmt.Sprintf("%s-%s-%d", csv, sa, i)
	}
	return csv + "-" + sa
}

func appendTyped(out *[]*unstructured.Unstructured, objs ...runtime.Object) error {
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		*out = append(*out, u)
	}
	return nil
}
