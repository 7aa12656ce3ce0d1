package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// uninstaller holds a finalizer on the ClusterCSIDriver while it is Managed and, when the ClusterCSIDriver is
// deleted, deletes the driver's static objects (CSIDriver, RBAC, Service, ServiceMonitor, PDB, ConfigMap) before
// letting it go. The workload controllers delete the Deployment and DaemonSet under their own finalizers;
// CredentialsRequests are kept.
type uninstaller struct {
	operatorClient v1helpers.OperatorClientWithFinalizers
	clients        *resourceapply.ClientHolder
	assets         resourceapply.AssetFunc
	files          []string
}

func newUninstaller(u *uninstaller, resync time.Duration, recorder events.Recorder) factory.Controller {
	return factory.New().
		WithInformers(u.operatorClient.Informer()).
		WithSync(u.sync).
		ResyncEvery(resync).
		WithSyncDegradedOnError(u.operatorClient).
		ToController(UninstallController, recorder.WithComponentSuffix("uninstall"))
}

func (u *uninstaller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	spec, _, _, err := u.operatorClient.GetOperatorState()
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	meta, err := u.operatorClient.GetObjectMeta()
	if err != nil {
		return err
	}
	if meta.DeletionTimestamp == nil {
		if spec.ManagementState == opv1.Managed {
			return v1helpers.EnsureFinalizer(ctx, u.operatorClient, UninstallController)
		}
		return nil
	}
	var errs []error
	for _, r := range resourceapply.DeleteAll(ctx, u.clients, syncCtx.Recorder(), u.assets, u.files...) {
		// NotFound: already gone; NoMatch: the API (e.g. the monitoring CRDs) is not installed, so neither is the object.
		if r.Error != nil && !apierrors.IsNotFound(r.Error) && !apimeta.IsNoMatchError(r.Error) {
			errs = append(errs, fmt.Errorf("deleting %s: %w", r.File, r.Error))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return v1helpers.RemoveFinalizer(ctx, u.operatorClient, UninstallController)
}
