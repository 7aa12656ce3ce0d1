package adoption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// ControllerName prefixes the controller's condition.
const ControllerName = "AWSEFSLegacyOperatorAdoptionController"

// FinalizerPrefix starts every finalizer OpenShift's EFS operator sets (its OPERATOR_NAME is
// aws-efs-csi-driver-operator; library-go names finalizers <OPERATOR_NAME>.operator.openshift.io/<controller>).
const FinalizerPrefix = "aws-efs-csi-driver-operator.operator.openshift.io/"

// ForeignConditions are the condition types only OpenShift's operators write: the static resources controllers of
// the 5.x operator (csi-operator) and, from the 4.x operator, its static resources and ServiceMonitor controllers'
// and its credentials controller's Degraded, whose names differ from this operator's. The 4.x credentials
// controller's Available and Progressing are not among them: this operator keeps writing those
// (operator.LegacyCredentialsRequestController), since the ROSA documentation waits on the Available one.
var ForeignConditions = []string{
	"AWSEFSDriverControlPlaneStaticResourcesControllerDegraded",
	"AWSEFSDriverGuestStaticResourcesControllerDegraded",
	"CSIStaticResourceControllerDegraded",
	"AWSEFSDriverCredentialsRequestControllerDegraded",
	"AWSEFSDriverServiceMonitorControllerDegraded",
}

// Inputs configure the controller.
type Inputs struct {
	OperatorClient v1helpers.OperatorClientWithFinalizers
	// OwnFinalizers are the finalizers this operator's controllers set (full names).
	OwnFinalizers []string
	// OwnCondition is a condition this operator reports once it runs (the static resources controller's Degraded);
	// foreign conditions are removed only after it appears.
	OwnCondition string
	// LegacyRBAC removes the 4.9–4.13 operators' provisioner RBAC while the ClusterCSIDriver is Managed.
	LegacyRBAC LegacyRBAC
	// RBACInformers are the informers behind LegacyRBAC's listers.
	RBACInformers []factory.Informer
}

// New returns the adoption controller.
func New(in Inputs, resync time.Duration, recorder events.Recorder) factory.Controller {
	c := &controller{in: in}
	return factory.New().
		WithInformers(append([]factory.Informer{in.OperatorClient.Informer()}, in.RBACInformers...)...).
		WithSync(c.sync).
		ResyncEvery(resync).
		WithSyncDegradedOnError(in.OperatorClient).
		ToController(ControllerName, recorder.WithComponentSuffix("adoption"))
}

type controller struct {
	in Inputs
}

func (c *controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	meta, err := c.in.OperatorClient.GetObjectMeta()
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range ForeignFinalizers(meta.Finalizers, c.in.OwnFinalizers) {
		if err := c.in.OperatorClient.RemoveFinalizer(ctx, f); err != nil {
			errs = append(errs, fmt.Errorf("removing finalizer %s of OpenShift's EFS operator: %w", f, err))
			continue
		}
		klog.InfoS("Removed a finalizer of OpenShift's EFS operator that no controller here owns", "finalizer", f)
		syncCtx.Recorder().Eventf("LegacyFinalizerRemoved", "Removed finalizer %s left by OpenShift's EFS operator", f)
	}
	spec, status, _, err := c.in.OperatorClient.GetOperatorState()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if spec.ManagementState == opv1.Managed && meta.DeletionTimestamp == nil {
		deleted, err := c.in.LegacyRBAC.Remove(ctx)
		if err != nil {
			errs = append(errs, err)
		}
		for _, d := range deleted {
			klog.InfoS("Removed RBAC of OpenShift's 4.9–4.13 EFS operator that still bound the controller ServiceAccount", "object", d)
			syncCtx.Recorder().Eventf("LegacyRBACRemoved", "Removed %s left by OpenShift's 4.9–4.13 EFS operator", d)
		}
	}
	if v1helpers.FindOperatorCondition(status.Conditions, c.in.OwnCondition) == nil || !hasForeign(status.Conditions) {
		return errors.Join(errs...)
	}
	if _, _, err := v1helpers.UpdateStatus(ctx, c.in.OperatorClient, func(s *opv1.OperatorStatus) error {
		s.Conditions = slices.DeleteFunc(s.Conditions, func(cond opv1.OperatorCondition) bool { return slices.Contains(ForeignConditions, cond.Type) })
		return nil
	}); err != nil {
		errs = append(errs, fmt.Errorf("removing the conditions of OpenShift's EFS operator: %w", err))
	} else {
		klog.InfoS("Removed the conditions only OpenShift's EFS operator wrote")
	}
	return errors.Join(errs...)
}

// ForeignFinalizers returns the finalizers of OpenShift's EFS operator in finalizers that are not in own.
func ForeignFinalizers(finalizers, own []string) []string {
	var out []string
	for _, f := range finalizers {
		if strings.HasPrefix(f, FinalizerPrefix) && !slices.Contains(own, f) {
			out = append(out, f)
		}
	}
	return out
}

func hasForeign(conds []opv1.OperatorCondition) bool {
	return slices.ContainsFunc(conds, func(c opv1.OperatorCondition) bool { return slices.Contains(ForeignConditions, c.Type) })
}
