package adoption

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
)

const testNS = "openshift-cluster-csi-drivers"

func binding(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-b-" + name)}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
}

var controllerSA = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "aws-efs-csi-driver-controller-sa", Namespace: testNS}

func TestLegacyRBACRemove(t *testing.T) {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: LegacyProvisionerRole, UID: "uid-role"}}
	tests := []struct {
		name        string
		objs        []runtime.Object
		wantDeleted []string
	}{
		{name: "nothing left"},
		{name: "the 4.13 binding and role", objs: []runtime.Object{role, binding(LegacyProvisionerBinding, LegacyProvisionerRole, controllerSA)},
			wantDeleted: []string{"ClusterRoleBinding " + LegacyProvisionerBinding, "ClusterRole " + LegacyProvisionerRole}},
		{name: "role only", objs: []runtime.Object{role}, wantDeleted: []string{"ClusterRole " + LegacyProvisionerRole}},
		{name: "binding that also grants someone else", objs: []runtime.Object{role,
			binding(LegacyProvisionerBinding, LegacyProvisionerRole, controllerSA, rbacv1.Subject{Kind: rbacv1.UserKind, Name: "alice"})}},
		{name: "binding of that name to another role", objs: []runtime.Object{binding(LegacyProvisionerBinding, "other", controllerSA)}},
		{name: "role still bound by another binding", objs: []runtime.Object{role, binding(LegacyProvisionerBinding, LegacyProvisionerRole, controllerSA),
			binding("admins-own", LegacyProvisionerRole, rbacv1.Subject{Kind: rbacv1.UserKind, Name: "alice"})},
			wantDeleted: []string{"ClusterRoleBinding " + LegacyProvisionerBinding}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := kubefake.NewClientset(tc.objs...)
			bindings := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			roles := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			for _, o := range tc.objs {
				var err error
				switch o.(type) {
				case *rbacv1.ClusterRoleBinding:
					err = bindings.Add(o)
				case *rbacv1.ClusterRole:
					err = roles.Add(o)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			l := LegacyRBAC{Kube: client, Bindings: rbaclisters.NewClusterRoleBindingLister(bindings), Roles: rbaclisters.NewClusterRoleLister(roles),
				Namespace: testNS, ServiceAccount: controllerSA.Name}
			deleted, err := l.Remove(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(deleted, tc.wantDeleted) {
				t.Fatalf("deleted %v, want %v", deleted, tc.wantDeleted)
			}
			for _, o := range tc.objs {
				var err error
				switch o := o.(type) {
				case *rbacv1.ClusterRoleBinding:
					_, err = client.RbacV1().ClusterRoleBindings().Get(t.Context(), o.Name, metav1.GetOptions{})
				case *rbacv1.ClusterRole:
					_, err = client.RbacV1().ClusterRoles().Get(t.Context(), o.Name, metav1.GetOptions{})
				}
				key := map[bool]string{true: "ClusterRoleBinding ", false: "ClusterRole "}[isBinding(o)] + o.(metav1.Object).GetName()
				if gone := apierrors.IsNotFound(err); gone != slices.Contains(tc.wantDeleted, key) {
					t.Errorf("%s gone = %v (%v)", key, gone, err)
				}
			}
		})
	}
}

func isBinding(o runtime.Object) bool { _, ok := o.(*rbacv1.ClusterRoleBinding); return ok }
