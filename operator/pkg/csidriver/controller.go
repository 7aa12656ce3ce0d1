package csidriver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/klog/v2"
)

// ControllerName prefixes the controller's condition, AWSEFSDriverCSIDriverControllerDegraded.
const ControllerName = "AWSEFSDriverCSIDriverController"

// specHashAnnotation is where library-go's resourceapply.ApplyCSIDriver keeps the hash of the spec it applied; a
// CSIDriver without it (or with another hash) is deleted and recreated by ApplyCSIDriver.
const specHashAnnotation = "operator.openshift.io/spec-hash"

// Inputs are what the controller needs.
type Inputs struct {
	// Required is the CSIDriver asset (Read).
	Required *storagev1.CSIDriver
	Kube     kubernetes.Interface
	// CSIDrivers lists CSIDrivers; Informer is behind it.
	CSIDrivers storagelisters.CSIDriverLister
	Informer   factory.Informer
}

// New returns the controller that applies the CSIDriver while the ClusterCSIDriver is Managed and not being
// deleted. (Removed keeps it; the uninstall controller deletes it with the ClusterCSIDriver.)
func New(operatorClient v1helpers.OperatorClientWithFinalizers, in Inputs, resync time.Duration, recorder events.Recorder) factory.Controller {
	c := &controller{operatorClient: operatorClient, in: in}
	return factory.New().
		WithInformers(operatorClient.Informer(), in.Informer).
		WithSync(c.sync).
		ResyncEvery(resync).
		WithSyncDegradedOnError(operatorClient).
		ToController(ControllerName, recorder.WithComponentSuffix("csidriver"))
}

type controller struct {
	operatorClient v1helpers.OperatorClientWithFinalizers
	in             Inputs
}

func (c *controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	spec, _, _, err := c.operatorClient.GetOperatorState()
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	meta, err := c.operatorClient.GetObjectMeta()
	if err != nil {
		return err
	}
	if spec.ManagementState != opv1.Managed || meta.DeletionTimestamp != nil {
		return nil
	}
	required := c.in.Required
	existing, err := c.in.CSIDrivers.Get(required.Name)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		if adopted, changed, err := Adopt(existing, required); err != nil {
			return err
		} else if changed {
			if _, err := c.in.Kube.StorageV1().CSIDrivers().Update(ctx, adopted, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("adopting CSIDriver %s: %w", required.Name, err)
			}
			klog.InfoS("Adopted the existing CSIDriver in place", "name", required.Name, "ownerReferencesDropped", len(existing.OwnerReferences))
			syncCtx.Recorder().Eventf("CSIDriverAdopted", "Adopted CSIDriver %s in place (owner references dropped: %d)", required.Name, len(existing.OwnerReferences))
		}
	}
	// Creates a missing CSIDriver, keeps labels and annotations; after an adoption it has nothing left to change.
	_, _, err = resourceapply.ApplyCSIDriver(ctx, c.in.Kube.StorageV1(), syncCtx.Recorder(), required)
	return err
}

// Read parses the CSIDriver asset.
func Read(manifest []byte) (*storagev1.CSIDriver, error) {
	d := &storagev1.CSIDriver{}
	if err := yaml.Unmarshal(manifest, d); err != nil {
		return nil, fmt.Errorf("reading the CSIDriver asset: %w", err)
	}
	if d.Kind != "CSIDriver" || d.Name == "" {
		return nil, fmt.Errorf("the CSIDriver asset has kind %q name %q, want a named CSIDriver", d.Kind, d.Name)
	}
	return d, nil
}

// Adopt returns existing changed so that library-go's ApplyCSIDriver takes it as its own without recreating it: no
// owner references, the required spec (where only mutable fields differ) and the spec hash ApplyCSIDriver
// compares. changed is false when nothing needs writing. When an immutable field differs nothing is changed here
// and ApplyCSIDriver recreates the object, the only way the API allows.
func Adopt(existing, required *storagev1.CSIDriver) (*storagev1.CSIDriver, bool, error) {
	if !reflect.DeepEqual(existing.Spec.AttachRequired, required.Spec.AttachRequired) ||
		!sameModes(existing.Spec.VolumeLifecycleModes, required.Spec.VolumeLifecycleModes) {
		klog.InfoS("The existing CSIDriver differs in an immutable field; it will be recreated", "name", existing.Name,
			"attachRequired", existing.Spec.AttachRequired, "volumeLifecycleModes", existing.Spec.VolumeLifecycleModes)
		return existing, false, nil
	}
	hash, err := specHash(required.Spec)
	if err != nil {
		return nil, false, err
	}
	if len(existing.OwnerReferences) == 0 && existing.Annotations[specHashAnnotation] == hash {
		return existing, false, nil
	}
	out := existing.DeepCopy()
	out.OwnerReferences = nil
	out.Spec = *required.Spec.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[specHashAnnotation] = hash
	return out, true, nil
}

// specHash is the hash library-go's SetSpecHashAnnotation computes for spec.
func specHash(spec storagev1.CSIDriverSpec) (string, error) {
	m := &metav1.ObjectMeta{}
	if err := resourceapply.SetSpecHashAnnotation(m, spec); err != nil {
		return "", err
	}
	return m.Annotations[specHashAnnotation], nil
}

// sameModes compares volume lifecycle modes, an unset list meaning Persistent as the API server defaults it.
func sameModes(a, b []storagev1.VolumeLifecycleMode) bool {
	norm := func(m []storagev1.VolumeLifecycleMode) string {
		if len(m) == 0 {
			m = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	return norm(a) == norm(b)
}
