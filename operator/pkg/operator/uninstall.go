package operator

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
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	corev1informers "k8s.io/client-go/informers/core/v1"
)

// uninstaller holds a finalizer on the ClusterCSIDriver while it is Managed and, when the ClusterCSIDriver is
// deleted, deletes the driver's static objects (CSIDriver, RBAC, Service, ServiceMonitor, PDB, ConfigMap) before
// letting it go. The workload controllers delete the Deployment and DaemonSet under their own finalizers;
// CredentialsRequests are kept. It deletes nothing while a pod of the driver's ServiceAccounts still runs: a
// terminating csi-provisioner still renews its lease, and would be refused once the RBAC was gone.
type uninstaller struct {
	operatorClient v1helpers.OperatorClientWithFinalizers
	clients        *resourceapply.ClientHolder
	assets         resourceapply.AssetFunc
	files          []string
	// pods are the pods of namespace, where the driver's workloads run as serviceAccounts.
	pods            corev1informers.PodInformer
	namespace       string
	serviceAccounts []string
}

func newUninstaller(u *uninstaller, resync time.Duration, recorder events.Recorder) factory.Controller {
	return factory.New().
		WithInformers(u.operatorClient.Informer(), u.pods.Informer()).
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
	running, err := u.runningPods()
	if err != nil {
		return err
	}
	if len(running) > 0 {
		return fmt.Errorf("waiting for the driver's pods %s to stop before deleting the RBAC they use", strings.Join(running, ", "))
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

// stuckPodGrace is how long after its deletion deadline a pod that still exists is taken for one on a lost node,
// which only the node's deletion removes; the uninstall does not wait for it.
const stuckPodGrace = time.Minute

// runningPods returns the pods in the namespace that run as one of the driver's ServiceAccounts, except those
// stuck past their deletion deadline.
func (u *uninstaller) runningPods() ([]string, error) {
	pods, err := u.pods.Lister().Pods(u.namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		stuck := p.DeletionTimestamp != nil && time.Since(p.DeletionTimestamp.Time) > stuckPodGrace
		if slices.Contains(u.serviceAccounts, p.Spec.ServiceAccountName) && !stuck {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}
