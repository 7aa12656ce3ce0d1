package hooks

import (
	"fmt"
	"strings"
	"testing"

	opv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

// shippedRBAC reads the RBAC among the shipped static manifests, as the operator does at start-up, and returns
// it with the objects themselves.
func shippedRBAC(t *testing.T) (*RBAC, []runtime.Object) {
	t.Helper()
	statics, err := assets.DriverStatics()
	if err != nil {
		t.Fatal(err)
	}
	rendered := map[string][]byte{}
	for _, f := range statics {
		if rendered[f], err = assets.Render(f, testValues); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ReadRBAC(rendered)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, o := range r.serviceAccounts {
		objs = append(objs, o)
	}
	for _, o := range r.roles {
		objs = append(objs, o)
	}
	for _, o := range r.roleBindings {
		objs = append(objs, o)
	}
	for _, o := range r.clusterRoles {
		objs = append(objs, o)
	}
	for _, o := range r.clusterRoleBindings {
		objs = append(objs, o)
	}
	return r, objs
}

// informersHolding returns namespaced and cluster-scoped informers whose caches hold objs.
func informersHolding(t *testing.T, objs []runtime.Object) (ns, cluster informers.SharedInformerFactory) {
	t.Helper()
	client := fake.NewClientset()
	ns = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(testNamespace))
	cluster = informers.NewSharedInformerFactory(client, 0)
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.ServiceAccount:
			err = ns.Core().V1().ServiceAccounts().Informer().GetIndexer().Add(o)
		case *rbacv1.Role:
			err = ns.Rbac().V1().Roles().Informer().GetIndexer().Add(o)
		case *rbacv1.RoleBinding:
			err = ns.Rbac().V1().RoleBindings().Informer().GetIndexer().Add(o)
		case *rbacv1.ClusterRole:
			err = cluster.Rbac().V1().ClusterRoles().Informer().GetIndexer().Add(o)
		case *rbacv1.ClusterRoleBinding:
			err = cluster.Rbac().V1().ClusterRoleBindings().Informer().GetIndexer().Add(o)
		default:
			t.Fatalf("unexpected %T", o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return ns, cluster
}

func TestRBACInPlaceWaitsForTheWorkloadsOwnRBAC(t *testing.T) {
	r, all := shippedRBAC(t)
	if len(r.ServiceAccountNames()) != 2 || len(r.roleBindings) == 0 || len(r.clusterRoleBindings) == 0 {
		t.Fatalf("shipped RBAC: ServiceAccounts %v, %d RoleBindings, %d ClusterRoleBindings; want both ServiceAccounts and bindings of both kinds",
			r.ServiceAccountNames(), len(r.roleBindings), len(r.clusterRoleBindings))
	}
	spec := &opv1.OperatorSpec{ManagementState: opv1.Managed}
	controller := shippedDeployment(t)
	node := shippedDaemonSet(t)
	deploymentSpec := func(d *appsv1.Deployment) *corev1.PodSpec { return &d.Spec.Template.Spec }

	t.Run("everything applied", func(t *testing.T) {
		ns, cluster := informersHolding(t, all)
		if err := RBACInPlace(r, testNamespace, ns, cluster, deploymentSpec)(spec, controller); err != nil {
			t.Fatalf("controller hook = %v, want nil", err)
		}
		if err := RBACInPlace(r, testNamespace, ns, cluster, func(ds *appsv1.DaemonSet) *corev1.PodSpec { return &ds.Spec.Template.Spec })(spec, node); err != nil {
			t.Fatalf("node hook = %v, want nil", err)
		}
	})

	t.Run("nothing applied yet", func(t *testing.T) {
		ns, cluster := informersHolding(t, nil)
		err := RBACInPlace(r, testNamespace, ns, cluster, deploymentSpec)(spec, controller)
		if err == nil {
			t.Fatal("controller hook = nil with no RBAC applied, want an error")
		}
		for _, want := range []string{
			"ServiceAccount " + testNamespace + "/aws-efs-csi-driver-controller-sa",
			"RoleBinding " + testNamespace + "/aws-efs-csi-driver-lease-leader-election",
			"Role " + testNamespace + "/aws-efs-csi-driver-lease-leader-election",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("controller hook = %v, want it to name %s", err, want)
			}
		}
		if strings.Contains(err.Error(), "node-sa") {
			t.Errorf("controller hook = %v: it waits for the node's RBAC too, want only the controller's own", err)
		}
	})

	// Taking away any one object: it is reported if and only if the controller's ServiceAccount uses it. The
	// lease RoleBinding is the case the API server's audit log showed (csi-provisioner's get leases -> 403).
	const sa = "aws-efs-csi-driver-controller-sa"
	reported := map[string]bool{}
	for i := range all {
		rest := append(append([]runtime.Object{}, all[:i]...), all[i+1:]...)
		ns, cluster := informersHolding(t, rest)
		missing, err := r.Missing(testNamespace, sa, ns, cluster)
		if err != nil {
			t.Fatal(err)
		}
		if len(missing) > 1 {
			t.Errorf("without %s: missing %v, want at most that one", describe(all[i]), missing)
		}
		if len(missing) == 1 {
			if missing[0] != describe(all[i]) {
				t.Errorf("without %s: missing %v", describe(all[i]), missing)
			}
			reported[missing[0]] = true
		}
	}
	for _, want := range []string{
		"RoleBinding " + testNamespace + "/aws-efs-csi-driver-lease-leader-election",
		"ServiceAccount " + testNamespace + "/" + sa,
	} {
		if !reported[want] {
			t.Errorf("%s was never reported missing; reported: %v", want, reported)
		}
	}
}

// describe names o as Missing does: "Kind namespace/name" or "Kind name".
func describe(o runtime.Object) string {
	m, _ := meta.Accessor(o)
	kind := strings.TrimPrefix(fmt.Sprintf("%T", o), "*v1.")
	if m.GetNamespace() == "" {
		return kind + " " + m.GetName()
	}
	return kind + " " + m.GetNamespace() + "/" + m.GetName()
}
