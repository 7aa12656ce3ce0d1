package adoption

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
)

// The RBAC of OpenShift's EFS operators 4.9 to 4.13 (openshift/aws-efs-csi-driver-operator@66ed06c release-4.13
// assets/rbac/provisioner_binding.yaml and provisioner_role.yaml): csi-provisioner's rules in a ClusterRole of
// their own, bound to the controller ServiceAccount. 4.14 (@068355f) replaced them with a binding to the
// cluster's openshift-csi-main-provisioner-role and no operator since deletes them, so a cluster that came through
// those versions still grants the controller ServiceAccount the old rules.
const (
	LegacyProvisionerBinding = "efs-csi-provisioner-binding"
	LegacyProvisionerRole    = "efs-external-provisioner-role"
)

// LegacyRBAC removes the 4.9–4.13 provisioner ClusterRoleBinding and ClusterRole.
type LegacyRBAC struct {
	Kube kubernetes.Interface
	// Bindings and Roles list the cluster's ClusterRoleBindings and ClusterRoles.
	Bindings rbaclisters.ClusterRoleBindingLister
	Roles    rbaclisters.ClusterRoleLister
	// Namespace and ServiceAccount name the controller ServiceAccount the old binding names.
	Namespace, ServiceAccount string
}

// IsLegacyProvisionerBinding reports whether b is the binding the old operator made: the old ClusterRole bound to
// nothing but the controller ServiceAccount. A binding of that name that grants anything else is not ours.
func (l LegacyRBAC) IsLegacyProvisionerBinding(b *rbacv1.ClusterRoleBinding) bool {
	if b.Name != LegacyProvisionerBinding || b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != LegacyProvisionerRole || len(b.Subjects) != 1 {
		return false
	}
	s := b.Subjects[0]
	return s.Kind == rbacv1.ServiceAccountKind && s.Name == l.ServiceAccount && s.Namespace == l.Namespace
}

// Remove deletes the old binding when it is the old operator's, then the old ClusterRole when no ClusterRoleBinding
// refers to it any more. It returns what it deleted. The zero LegacyRBAC does nothing.
func (l LegacyRBAC) Remove(ctx context.Context) ([]string, error) {
	if l.Kube == nil {
		return nil, nil
	}
	var deleted []string
	b, err := l.Bindings.Get(LegacyProvisionerBinding)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	case l.IsLegacyProvisionerBinding(b):
		err := l.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &b.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting ClusterRoleBinding %s of OpenShift's 4.9–4.13 EFS operator: %w", b.Name, err)
		}
		deleted = append(deleted, "ClusterRoleBinding "+b.Name)
	}
	r, err := l.Roles.Get(LegacyProvisionerRole)
	if apierrors.IsNotFound(err) {
		return deleted, nil
	}
	if err != nil {
		return deleted, err
	}
	all, err := l.Bindings.List(labels.Everything())
	if err != nil {
		return deleted, err
	}
	for _, o := range all {
		if o.RoleRef.Kind == "ClusterRole" && o.RoleRef.Name == r.Name && !(o.Name == LegacyProvisionerBinding && len(deleted) > 0) {
			return deleted, nil // still bound by someone else
		}
	}
	err = l.Kube.RbacV1().ClusterRoles().Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &r.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return deleted, fmt.Errorf("deleting ClusterRole %s of OpenShift's 4.9–4.13 EFS operator: %w", r.Name, err)
	}
	return append(deleted, "ClusterRole "+r.Name), nil
}
