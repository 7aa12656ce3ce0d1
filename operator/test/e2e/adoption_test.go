package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/openshift/aws-efs-csi/operator/assets"
	"github.com/openshift/aws-efs-csi/operator/pkg/adoption"
	"github.com/openshift/aws-efs-csi/operator/pkg/csidriver"
)

// TestAdoptOpenShiftOperatorInstall starts from what OpenShift's own EFS operators leave on the ClusterCSIDriver:
// the 5.x operator's static resources conditions, and the 4.x operator's CSIStaticResourceController finalizer
// and condition, with the CSIDriver its library-go applied. This operator takes over: the foreign conditions and
// finalizer go, so does the provisioner RBAC the 4.9–4.13 operators left bound to the controller ServiceAccount,
// the CSIDriver is kept as it is, the steady state writes nothing, and deleting the ClusterCSIDriver
// completes.
func TestAdoptOpenShiftOperatorInstall(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	legacyFinalizer := adoption.FinalizerPrefix + "CSIStaticResourceController"
	cr := ok(e.ops.OperatorV1().ClusterCSIDrivers().Create(ctx, &opv1.ClusterCSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: crName, Finalizers: []string{
			adoption.FinalizerPrefix + "AWSEFSDriverControllerServiceController", adoption.FinalizerPrefix + "AWSEFSDriverNodeServiceController", legacyFinalizer}},
		Spec: opv1.ClusterCSIDriverSpec{OperatorSpec: opv1.OperatorSpec{ManagementState: opv1.Managed, LogLevel: opv1.Normal, OperatorLogLevel: opv1.Normal}},
	}, metav1.CreateOptions{}))(t)
	now := metav1.Now()
	for _, c := range []string{"AWSEFSDriverControlPlaneStaticResourcesControllerDegraded", "AWSEFSDriverGuestStaticResourcesControllerDegraded", "CSIStaticResourceControllerDegraded",
		"AWSEFSDriverCredentialsRequestControllerAvailable"} {
		cr.Status.Conditions = append(cr.Status.Conditions, opv1.OperatorCondition{Type: c, Status: opv1.ConditionFalse, LastTransitionTime: now, Reason: "AsExpected"})
	}
	ok(e.ops.OperatorV1().ClusterCSIDrivers().UpdateStatus(ctx, cr, metav1.UpdateOptions{}))(t)
	// OpenShift's operator applied the same CSIDriver through the same library-go call.
	required := ok(csidriver.Read(ok(assets.Read(assets.CSIDriver))(t)))(t)
	csi, _, err := resourceapply.ApplyCSIDriver(ctx, e.kube.StorageV1(), events.NewInMemoryRecorder("openshift-operator", clock.RealClock{}), required)
	if err != nil {
		t.Fatal(err)
	}

	// What OpenShift's 4.9–4.13 operators left and no later one deletes: csi-provisioner's rules in a ClusterRole
	// of their own, bound to the controller ServiceAccount (openshift/aws-efs-csi-driver-operator@66ed06c
	// release-4.13 assets/rbac/provisioner_role.yaml, provisioner_binding.yaml; the rules abridged).
	legacyRole := ok(e.kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "efs-external-provisioner-role"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "create", "delete"}}}},
		metav1.CreateOptions{}))(t)
	ok(e.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "efs-csi-provisioner-binding"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "aws-efs-csi-driver-controller-sa", Namespace: namespace}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: legacyRole.Name}}, metav1.CreateOptions{}))(t)

	op := e.startOperator(testConfig())
	eventually(t, 2*time.Minute, "every driver object", e.driverObjectsExist)
	eventually(t, time.Minute, "the 4.9–4.13 provisioner RBAC removed", func(ctx context.Context) error {
		if _, err := e.kube.RbacV1().ClusterRoleBindings().Get(ctx, "efs-csi-provisioner-binding", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ClusterRoleBinding efs-csi-provisioner-binding still there (%v)", err)
		}
		if _, err := e.kube.RbacV1().ClusterRoles().Get(ctx, legacyRole.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ClusterRole %s still there (%v)", legacyRole.Name, err)
		}
		return nil
	})
	eventually(t, 2*time.Minute, "the foreign finalizer and conditions removed", func(ctx context.Context) error {
		cr, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, crName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if slices.Contains(cr.Finalizers, legacyFinalizer) {
			return fmt.Errorf("finalizers %v", cr.Finalizers)
		}
		for _, c := range cr.Status.Conditions {
			if slices.Contains(adoption.ForeignConditions, c.Type) {
				return fmt.Errorf("condition %s still there", c.Type)
			}
		}
		if _, err := e.condition(ctx, "AWSEFSDriverStaticResourcesControllerDegraded"); err != nil {
			return err
		}
		return nil
	})
	// The conditions OpenShift's console, CI and documentation wait on keep their names: the workload
	// controllers' Available (openshift/release's EFS steps and the OpenShift docs wait for both) and the 4.x
	// credentials controller's, which the ROSA documentation lists and which mirrors this operator's
	// AWSEFSCredentialsRequestController.
	eventually(t, time.Minute, "the conditions admins wait on", func(ctx context.Context) error {
		for _, c := range []string{"AWSEFSDriverControllerServiceControllerAvailable", "AWSEFSDriverNodeServiceControllerAvailable"} {
			if _, err := e.condition(ctx, c); err != nil {
				return err
			}
		}
		ours, err := e.condition(ctx, "AWSEFSCredentialsRequestControllerAvailable")
		if err != nil {
			return err
		}
		legacy, err := e.condition(ctx, "AWSEFSDriverCredentialsRequestControllerAvailable")
		if err != nil {
			return err
		}
		if legacy.Status != ours.Status || legacy.Reason != ours.Reason {
			return fmt.Errorf("AWSEFSDriverCredentialsRequestControllerAvailable %s %s, AWSEFSCredentialsRequestControllerAvailable %s %s", legacy.Status, legacy.Reason, ours.Status, ours.Reason)
		}
		return nil
	})
	if got := ok(e.kube.StorageV1().CSIDrivers().Get(ctx, required.Name, metav1.GetOptions{}))(t); got.UID != csi.UID || got.ResourceVersion != csi.ResourceVersion {
		t.Errorf("the CSIDriver OpenShift's operator applied was written again (resourceVersion %s, was %s)", got.ResourceVersion, csi.ResourceVersion)
	}
	e.checkSteadyState(t, op)
	e.deleteClusterCSIDriver()
}
