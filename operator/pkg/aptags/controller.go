package aptags

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	efstypes "github.com/aws/aws-sdk-go-v2/service/efs/types"
	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName is the controller's name, as in OpenShift's operator. It sets no conditions.
const ControllerName = "AWSEFSEFSAccessPointTagsController"

// Rates and periods of OpenShift's operator.
const (
	resync       = 30 * time.Minute
	callsPerSec  = 10
	callsBurst   = 100
	retryInitial = 10 * time.Second
	retryMax     = 100 * time.Hour
)

// CredentialsSecret is the driver controller's credentials Secret; the controller role also tags access points.
const CredentialsSecret = "aws-efs-cloud-credentials"

// Inputs are what the controller reads and writes.
type Inputs struct {
	OperatorClient  v1helpers.OperatorClient
	Kube            kubernetes.Interface
	Infrastructures configlisters.InfrastructureLister
	// InfrastructureInformer triggers syncs; PVInformer and SecretInformer only feed their listers.
	InfrastructureInformer factory.Informer
	PVs                    corelisters.PersistentVolumeLister
	PVInformer             factory.Informer
	// Secrets lists Secrets in the operator's namespace.
	Secrets        corelisters.SecretLister
	SecretInformer factory.Informer
	Namespace      string
	// WebIdentityTokenFile is the operator's own token (AWS_WEB_IDENTITY_TOKEN_FILE), read at start-up.
	WebIdentityTokenFile string
}

type controller struct {
	in      Inputs
	clients clients
	limiter *rate.Limiter
	// failed holds PVs whose tagging failed; its own worker retries them with backoff. inFailed is the set of its
	// names, which the sync skips.
	failed   workqueue.TypedRateLimitingInterface[string]
	mu       sync.Mutex
	inFailed map[string]bool
	recorder events.Recorder
}

// New returns the access-point tags controller.
func New(in Inputs, recorder events.Recorder) factory.Controller {
	c := &controller{
		in:       in,
		limiter:  rate.NewLimiter(rate.Limit(callsPerSec), callsBurst),
		failed:   workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryInitial, retryMax)),
		inFailed: map[string]bool{},
		recorder: recorder.WithComponentSuffix("access-point-tags"),
	}
	return factory.New().
		WithInformers(in.InfrastructureInformer).
		WithBareInformers(in.PVInformer, in.SecretInformer).
		WithSync(c.sync).
		ResyncEvery(resync).
		WithPostStartHooks(c.retryWorker).
		ToController(ControllerName, c.recorder)
}

func (c *controller) sync(ctx context.Context, _ factory.SyncContext) error {
	infra, tags, ok, err := c.state()
	if err != nil || !ok {
		return err
	}
	hash := TagsHash(tags)
	pvs, err := c.in.PVs.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, pv := range pvs {
		if !NeedsTags(pv, hash) || c.isFailed(pv.Name) {
			continue
		}
		if err := c.tag(ctx, pv, infra, tags, hash); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			c.fail(pv.Name, err)
		}
	}
	return nil
}

// state returns the Infrastructure and its tags when the controller acts: Managed, not being deleted, a HyperShift
// guest on AWS with resource tags.
func (c *controller) state() (*configv1.Infrastructure, []configv1.AWSResourceTag, bool, error) {
	spec, _, _, err := c.in.OperatorClient.GetOperatorState()
	if apierrors.IsNotFound(err) {
		return nil, nil, false, nil
	}
	if err != nil || spec.ManagementState != opv1.Managed {
		return nil, nil, false, err
	}
	infra, err := c.in.Infrastructures.Get("cluster")
	if apierrors.IsNotFound(err) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	tags, ok := active(infra)
	return infra, tags, ok, nil
}

// tag applies tags to the access point of pv and records hash on pv.
func (c *controller) tag(ctx context.Context, pv *corev1.PersistentVolume, infra *configv1.Infrastructure, tags []configv1.AWSResourceTag, hash string) error {
	secret, err := c.in.Secrets.Secrets(c.in.Namespace).Get(CredentialsSecret)
	if err != nil {
		return fmt.Errorf("reading Secret %s/%s: %w", c.in.Namespace, CredentialsSecret, err)
	}
	id, err := identityFrom(secret, infra, c.in.WebIdentityTokenFile)
	if err != nil {
		return err
	}
	client, err := c.clients.get(ctx, id)
	if err != nil {
		return err
	}
	if err := c.limiter.Wait(ctx); err != nil {
		return err
	}
	apID := AccessPointID(pv.Spec.CSI.VolumeHandle)
	in := &efs.TagResourceInput{ResourceId: aws.String(apID)}
	for _, t := range tags {
		in.Tags = append(in.Tags, efstypes.Tag{Key: aws.String(t.Key), Value: aws.String(t.Value)})
	}
	if _, err := client.TagResource(ctx, in); err != nil {
		return fmt.Errorf("tagging access point %s of PersistentVolume %s: %w", apID, pv.Name, err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{HashAnnotation: hash}}})
	if err != nil {
		return err
	}
	if _, err := c.in.Kube.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("recording the tags hash on PersistentVolume %s: %w", pv.Name, err)
	}
	klog.V(2).InfoS("Tagged the access point of a PersistentVolume", "pv", pv.Name, "accessPointID", apID, "tags", len(tags))
	return nil
}

// fail reports a failed PV and hands it to the retry worker.
func (c *controller) fail(name string, err error) {
	klog.ErrorS(err, "Tagging an access point failed; retrying with backoff", "pv", name)
	c.recorder.Warningf("EFSAccessPointTagsUpdateFailed", "Failed to update the tags of the access point of PersistentVolume %s: %v", name, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFailed[name] = true
	c.failed.AddRateLimited(name)
}

func (c *controller) isFailed(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inFailed[name]
}

func (c *controller) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed.Forget(name)
	delete(c.inFailed, name)
}

// retryWorker retries failed PVs until ctx ends, each after its own backoff.
func (c *controller) retryWorker(ctx context.Context, _ factory.SyncContext) error {
	go func() {
		<-ctx.Done()
		c.failed.ShutDown()
	}()
	for {
		name, quit := c.failed.Get()
		if quit {
			return nil
		}
		c.retry(ctx, name)
		c.failed.Done(name)
	}
}

func (c *controller) retry(ctx context.Context, name string) {
	infra, tags, ok, err := c.state()
	if err != nil {
		c.failed.AddRateLimited(name)
		return
	}
	pv, err := c.in.PVs.Get(name)
	if !ok || apierrors.IsNotFound(err) {
		c.forget(name)
		return
	}
	if err != nil {
		c.failed.AddRateLimited(name)
		return
	}
	hash := TagsHash(tags)
	if !NeedsTags(pv, hash) {
		c.forget(name)
		return
	}
	if err := c.tag(ctx, pv, infra, tags, hash); err != nil {
		if ctx.Err() == nil {
			c.fail(name, err)
		}
		return
	}
	c.forget(name)
}
