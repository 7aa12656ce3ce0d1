package hooks

import (
	"fmt"
	"slices"
	"strings"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/operator/resource/resourceread"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
)

// RBAC is the RBAC the driver's static manifests give its ServiceAccounts, read once at start-up.
type RBAC struct {
	serviceAccounts     []*corev1.ServiceAccount
	roles               []*rbacv1.Role
	roleBindings        []*rbacv1.RoleBinding
	clusterRoles        []*rbacv1.ClusterRole
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
}

// ReadRBAC reads the ServiceAccounts, Roles, ClusterRoles and their bindings among the rendered manifests and
// ignores every other kind.
func ReadRBAC(manifests map[string][]byte) (*RBAC, error) {
	r := &RBAC{}
	for name, m := range manifests {
		obj, err := resourceread.ReadGenericWithUnstructured(m)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			r.serviceAccounts = append(r.serviceAccounts, o)
		case *rbacv1.Role:
			r.roles = append(r.roles, o)
		case *rbacv1.RoleBinding:
			r.roleBindings = append(r.roleBindings, o)
		case *rbacv1.ClusterRole:
			r.clusterRoles = append(r.clusterRoles, o)
		case *rbacv1.ClusterRoleBinding:
			r.clusterRoleBindings = append(r.clusterRoleBindings, o)
		}
	}
	return r, nil
}

// ServiceAccountNames returns the names of the ServiceAccounts among the manifests.
func (r *RBAC) ServiceAccountNames() []string {
	var out []string
	for _, sa := range r.serviceAccounts {
		out = append(out, sa.Name)
	}
	return out
}

// Missing returns, as "Kind namespace/name", the objects that the ServiceAccount namespace/sa needs and that the
// listers do not hold yet: the ServiceAccount, every binding among the manifests naming it, and the roles among
// the manifests those bindings refer to (a role of the cluster's own, such as system:auth-delegator, is not ours
// to wait for).
func (r *RBAC) Missing(namespace, sa string, ns, cluster informers.SharedInformerFactory) ([]string, error) {
	var missing []string
	check := func(kind, key string, err error) error {
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, kind+" "+key)
		case err != nil:
			return fmt.Errorf("looking up %s %s: %w", kind, key, err)
		}
		return nil
	}
	for _, o := range r.serviceAccounts {
		if o.Name == sa && o.Namespace == namespace {
			_, err := ns.Core().V1().ServiceAccounts().Lister().ServiceAccounts(namespace).Get(sa)
			if err := check("ServiceAccount", namespace+"/"+sa, err); err != nil {
				return nil, err
			}
		}
	}
	var roles, clusterRoles []string
	for _, b := range r.roleBindings {
		if !namesServiceAccount(b.Subjects, namespace, sa) {
			continue
		}
		_, err := ns.Rbac().V1().RoleBindings().Lister().RoleBindings(b.Namespace).Get(b.Name)
		if err := check("RoleBinding", b.Namespace+"/"+b.Name, err); err != nil {
			return nil, err
		}
		if b.RoleRef.Kind == "ClusterRole" {
			clusterRoles = append(clusterRoles, b.RoleRef.Name)
		} else {
			roles = append(roles, b.RoleRef.Name)
		}
	}
	for _, b := range r.clusterRoleBindings {
		if !namesServiceAccount(b.Subjects, namespace, sa) {
			continue
		}
		_, err := cluster.Rbac().V1().ClusterRoleBindings().Lister().Get(b.Name)
		if err := check("ClusterRoleBinding", b.Name, err); err != nil {
			return nil, err
		}
		clusterRoles = append(clusterRoles, b.RoleRef.Name)
	}
	for _, o := range r.roles {
		if o.Namespace == namespace && slices.Contains(roles, o.Name) {
			_, err := ns.Rbac().V1().Roles().Lister().Roles(o.Namespace).Get(o.Name)
			if err := check("Role", o.Namespace+"/"+o.Name, err); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range r.clusterRoles {
		if slices.Contains(clusterRoles, o.Name) {
			_, err := cluster.Rbac().V1().ClusterRoles().Lister().Get(o.Name)
			if err := check("ClusterRole", o.Name, err); err != nil {
				return nil, err
			}
		}
	}
	return missing, nil
}

// RBACInPlace returns a workload hook that fails, naming what is missing, until the RBAC the pods' ServiceAccount
// needs is in place. The static resources controller applies the RBAC while the workload controllers create the
// Deployment and DaemonSet; a pod that starts first is refused by the API server (csi-provisioner's leader
// election: get leases -> 403) and only works once the RBAC shows up. The failing sync is retried with the
// controller's back-off, like library-go's wait for the credentials Secret. ns must be the informers of
// namespace, cluster the cluster-scoped ones; the workload controllers must declare the informers behind the
// listers it reads (Deployment and DaemonSet do), so that the first sync runs on synced caches.
func RBACInPlace[T any](r *RBAC, namespace string, ns, cluster informers.SharedInformerFactory, podSpec func(T) *corev1.PodSpec) func(*opv1.OperatorSpec, T) error {
	return func(_ *opv1.OperatorSpec, w T) error {
		sa := podSpec(w).ServiceAccountName
		missing, err := r.Missing(namespace, sa, ns, cluster)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			return fmt.Errorf("waiting for the static resources controller to create %s, which ServiceAccount %s/%s needs before its pods start", strings.Join(missing, ", "), namespace, sa)
		}
		return nil
	}
}

func namesServiceAccount(subjects []rbacv1.Subject, namespace, sa string) bool {
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == namespace {
			return true
		}
	}
	return false
}
