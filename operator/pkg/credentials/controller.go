package credentials

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/resource/resourcemerge"
	"github.com/openshift/library-go/pkg/operator/resource/resourceread"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
)

// cloudCredentialName is the cloud-credential operator's singleton configuration.
const cloudCredentialName = "cluster"

// Options configure one controller.
type Options struct {
	// Name prefixes the controller's conditions on the ClusterCSIDriver, e.g. AWSEFSCredentialsRequestController.
	Name string
	// Manifest is the CredentialsRequest with start-up placeholders filled.
	Manifest []byte
	// TargetNamespace receives the Secret; it overwrites spec.secretRef.namespace.
	TargetNamespace string
	// RoleARNEnv names the variable the role ARN came from (ROLEARN or NODE_ROLEARN).
	RoleARNEnv string
	// RoleARN is the value of RoleARNEnv read at start-up; empty when unset.
	RoleARN string
	// ResyncInterval is how often the controller re-checks without events; one minute when zero.
	ResyncInterval time.Duration
	// AliasName, when set, is a second prefix under which <AliasName>Available and <AliasName>Progressing are
	// written with the same values: the name an older operator gave this controller, which admins' scripts and
	// documentation still wait on.
	AliasName string
}

// Controller applies one CredentialsRequest.
type Controller struct {
	opts           Options
	operatorClient v1helpers.OperatorClientWithFinalizers
	dynamicClient  dynamic.Interface
	cloudCreds     operatorlisters.CloudCredentialLister
}

// Wanted reports whether the CredentialsRequest should exist: always when the cloud-credential operator mints or
// passes through credentials, and in Manual mode (STS included) only when a role ARN was given, since nobody
// would provision it otherwise.
func Wanted(mode opv1.CloudCredentialsMode, roleARN string) bool {
	return mode != opv1.CloudCredentialsModeManual || roleARN != ""
}

// New returns the controller as a library-go factory controller. Sync errors set <Name>Degraded on the
// ClusterCSIDriver with the error as the message.
func New(opts Options, operatorClient v1helpers.OperatorClientWithFinalizers, dynamicClient dynamic.Interface,
	cloudCreds operatorlisters.CloudCredentialLister, cloudCredsInformer factory.Informer, recorder events.Recorder) factory.Controller {
	if opts.ResyncInterval == 0 {
		opts.ResyncInterval = time.Minute
	}
	c := &Controller{opts: opts, operatorClient: operatorClient, dynamicClient: dynamicClient, cloudCreds: cloudCreds}
	return factory.New().
		WithInformers(operatorClient.Informer(), cloudCredsInformer).
		WithSync(c.sync).
		ResyncEvery(opts.ResyncInterval).
		WithSyncDegradedOnError(operatorClient).
		ToController(opts.Name, recorder.WithComponentSuffix("credentials-request"))
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	spec, status, _, err := c.operatorClient.GetOperatorState()
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
	// Removed and deletion keep the CredentialsRequest: deleting it would make the cloud-credential operator
	// delete the IAM user or role, which the admin may have created by hand in manual mode.
	if spec.ManagementState != opv1.Managed || meta.DeletionTimestamp != nil {
		return nil
	}
	cc, err := c.cloudCreds.Get(cloudCredentialName)
	if err != nil {
		return fmt.Errorf("reading CloudCredential %q to learn the credentials mode: %w", cloudCredentialName, err)
	}
	if !Wanted(cc.Spec.CredentialsMode, c.opts.RoleARN) {
		klog.V(4).InfoS("CredentialsRequest not wanted", "controller", c.opts.Name, "mode", cc.Spec.CredentialsMode, "env", c.opts.RoleARNEnv)
		return c.setConditions(ctx, nil, opv1.ConditionTrue, "CredentialsDisabled",
			fmt.Sprintf("The cloud-credential operator is in Manual mode and %s is not set: no credentials are requested", c.opts.RoleARNEnv))
	}
	cr, err := c.apply(ctx, spec, status, syncCtx.Recorder())
	if err != nil {
		return err
	}
	if provisioned, _, _ := unstructured.NestedBool(cr.Object, "status", "provisioned"); !provisioned {
		return c.setConditions(ctx, cr, opv1.ConditionFalse, "CredentialsNotProvisionedYet",
			fmt.Sprintf("Waiting for the cloud-credential operator to provision CredentialsRequest %s/%s", cr.GetNamespace(), cr.GetName()))
	}
	return c.setConditions(ctx, cr, opv1.ConditionTrue, "AsExpected", "")
}

func (c *Controller) apply(ctx context.Context, spec *opv1.OperatorSpec, status *opv1.OperatorStatus, recorder events.Recorder) (*unstructured.Unstructured, error) {
	cr, err := resourceread.ReadGenericWithUnstructured(c.opts.Manifest)
	if err != nil {
		return nil, fmt.Errorf("parsing the CredentialsRequest manifest: %w", err)
	}
	u, ok := cr.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("CredentialsRequest manifest decoded to %T", cr)
	}
	if err := unstructured.SetNestedField(u.Object, c.opts.TargetNamespace, "spec", "secretRef", "namespace"); err != nil {
		return nil, err
	}
	if err := SetSTS(u, c.opts.RoleARNEnv, c.opts.RoleARN); err != nil {
		return nil, err
	}
	expected := int64(-1)
	if g := resourcemerge.GenerationFor(status.Generations,
		schema.GroupResource{Group: resourceapply.CredentialsRequestGroup, Resource: resourceapply.CredentialsRequestResource},
		u.GetNamespace(), u.GetName()); g != nil {
		expected = g.LastGeneration
	}
	out, _, err := resourceapply.ApplyCredentialsRequest(ctx, c.dynamicClient, recorder, u, expected)
	if err != nil {
		return nil, err
	}
	return c.recordSpecHash(ctx, out, u.GetAnnotations()[SpecHashAnnotation])
}

// SpecHashAnnotation is where library-go's ApplyCredentialsRequest keeps the hash of the spec it applied, and what
// it compares on the next apply.
const SpecHashAnnotation = "operator.openshift.io/spec-hash"

// recordSpecHash makes the CredentialsRequest carry hash, the spec hash of what was just applied. library-go's
// ApplyCredentialsRequest (openshift/library-go@0c9fbc9f043a pkg/operator/resource/resourceapply/credentialsrequest.go)
// updates a request whose spec-hash annotation differs from the required one, but copies only spec into the object
// it writes: the annotation keeps the hash of whoever wrote it first. After OpenShift's own operator (whose spec
// differs from ours: another statement list, no ec2 action in 4.x) every sync would therefore PUT the request
// again, forever. One merge patch of the annotation ends that; it changes no spec, so neither the generation nor
// the cloud-credential operator's work.
func (c *Controller) recordSpecHash(ctx context.Context, cr *unstructured.Unstructured, hash string) (*unstructured.Unstructured, error) {
	if hash == "" || cr.GetAnnotations()[SpecHashAnnotation] == hash {
		return cr, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations":     map[string]string{SpecHashAnnotation: hash},
		"resourceVersion": cr.GetResourceVersion(),
	}})
	if err != nil {
		return nil, err
	}
	out, err := c.dynamicClient.Resource(credentialsRequestGVR).Namespace(cr.GetNamespace()).Patch(ctx, cr.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("recording the spec hash on CredentialsRequest %s/%s: %w", cr.GetNamespace(), cr.GetName(), err)
	}
	return out, nil
}

var credentialsRequestGVR = schema.GroupVersionResource{
	Group: resourceapply.CredentialsRequestGroup, Version: resourceapply.CredentialsRequestVersion, Resource: resourceapply.CredentialsRequestResource,
}

// setConditions writes <Name>Available and <Name>Progressing (the inverse of Available here) and, when cr is not
// nil, its generation in status.generations, which makes the next apply a no-op when nothing changed.
func (c *Controller) setConditions(ctx context.Context, cr *unstructured.Unstructured, available opv1.ConditionStatus, reason, message string) error {
	progressing := opv1.ConditionFalse
	if available == opv1.ConditionFalse {
		progressing = opv1.ConditionTrue
	}
	generation := func(st *opv1.OperatorStatus) error {
		if cr != nil {
			resourcemerge.SetGeneration(&st.Generations, opv1.GenerationStatus{
				Group: resourceapply.CredentialsRequestGroup, Resource: resourceapply.CredentialsRequestResource,
				Namespace: cr.GetNamespace(), Name: cr.GetName(), LastGeneration: cr.GetGeneration(),
			})
		}
		return nil
	}
	updates := []v1helpers.UpdateStatusFunc{generation}
	for _, prefix := range []string{c.opts.Name, c.opts.AliasName} {
		if prefix == "" {
			continue
		}
		updates = append(updates,
			v1helpers.UpdateConditionFn(opv1.OperatorCondition{Type: prefix + opv1.OperatorStatusTypeAvailable, Status: available, Reason: reason, Message: message}),
			v1helpers.UpdateConditionFn(opv1.OperatorCondition{Type: prefix + opv1.OperatorStatusTypeProgressing, Status: progressing, Reason: reason, Message: message}))
	}
	_, _, err := v1helpers.UpdateStatus(ctx, c.operatorClient, updates...)
	return err
}
