// Package whilemanaged guards the operator's workload hooks so that they run only while the ClusterCSIDriver is
// Managed and not being deleted. library-go runs the Deployment and DaemonSet hooks on its delete path too
// (Removed, uninstall), and a hook that waits for something (the community driver to go, the RBAC to be
// applied) must never hold up a deletion.
package whilemanaged

import (
	opv1 "github.com/openshift/api/operator/v1"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Hook returns hook guarded to run only while the ClusterCSIDriver crName exists, is Managed and is not being
// deleted; otherwise the guarded hook does nothing.
func Hook[T any](drivers operatorlisters.ClusterCSIDriverLister, crName string, hook func(*opv1.OperatorSpec, T) error) func(*opv1.OperatorSpec, T) error {
	return func(spec *opv1.OperatorSpec, obj T) error {
		if spec.ManagementState != opv1.Managed {
			return nil
		}
		cr, err := drivers.Get(crName)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if cr.DeletionTimestamp != nil {
			return nil
		}
		return hook(spec, obj)
	}
}
