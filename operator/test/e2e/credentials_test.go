package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/resource/resourceread"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
)

const (
	controllerCR  = "openshift-aws-efs-csi-driver"
	nodeCR        = "openshift-aws-efs-csi-driver-node"
	controllerARN = "arn:aws:iam::269733383066:role/e2e-openshift-cluster-csi-drivers-aws-efs-cloud-cre"
	nodeARN       = "arn:aws:iam::269733383066:role/e2e-openshift-cluster-csi-drivers-node-aws-efs-clou"
)

// TestCredentialsModes covers which CredentialsRequests exist, and in which form, for each cloud-credential
// operator mode and role ARN setting, and the Degraded condition of a malformed NODE_ROLEARN.
func TestCredentialsModes(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name                  string
		mode                  opv1.CloudCredentialsMode
		roleARN, nodeRoleARN  string
		wantController        string // "" absent, "keys" present without STS, else the STS role ARN
		wantNode              string
		wantNodeDegradedMatch string
	}{
		{name: "mint", mode: opv1.CloudCredentialsModeMint, wantController: "keys", wantNode: "keys"},
		{name: "manual without roles", mode: opv1.CloudCredentialsModeManual},
		{name: "STS controller role only", mode: opv1.CloudCredentialsModeManual, roleARN: controllerARN, wantController: controllerARN},
		{name: "STS with NODE_ROLEARN", mode: opv1.CloudCredentialsModeManual, roleARN: controllerARN, nodeRoleARN: nodeARN, wantController: controllerARN, wantNode: nodeARN},
		{name: "malformed NODE_ROLEARN", mode: opv1.CloudCredentialsModeManual, roleARN: controllerARN, nodeRoleARN: "arn:aws:iam::2697:role/x",
			wantController: controllerARN, wantNodeDegradedMatch: "arn:aws:iam::<12-digit account>:role/<name>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.setCredentialsMode(tc.mode)
			cfg := testConfig()
			cfg.RoleARN, cfg.NodeRoleARN = tc.roleARN, tc.nodeRoleARN
			op := e.startOperator(cfg)
			e.createClusterCSIDriver(opv1.Managed)
			eventually(t, time.Minute, "CredentialsRequests", func(ctx context.Context) error {
				// An absent request must be the operator's decision, reported on the ClusterCSIDriver.
				if tc.wantController == "" {
					if err := e.wantDisabled(ctx, "AWSEFSCredentialsRequestController", "ROLEARN"); err != nil {
						return err
					}
				}
				if tc.wantNode == "" && tc.wantNodeDegradedMatch == "" {
					if err := e.wantDisabled(ctx, "AWSEFSNodeCredentialsRequestController", "NODE_ROLEARN"); err != nil {
						return err
					}
				}
				if err := e.checkCredentialsRequest(ctx, controllerCR, tc.wantController); err != nil {
					return err
				}
				if tc.wantNodeDegradedMatch != "" {
					c, err := e.condition(ctx, "AWSEFSNodeCredentialsRequestControllerDegraded")
					if err != nil {
						return err
					}
					if c.Status != opv1.ConditionTrue || !strings.Contains(c.Message, tc.wantNodeDegradedMatch) || !strings.Contains(c.Message, "NODE_ROLEARN") {
						return fmt.Errorf("node Degraded = %s %q", c.Status, c.Message)
					}
					return e.checkCredentialsRequest(ctx, nodeCR, "")
				}
				return e.checkCredentialsRequest(ctx, nodeCR, tc.wantNode)
			})
			e.deleteClusterCSIDriver()
			op.stop()
			for _, name := range []string{controllerCR, nodeCR} {
				_ = e.dyn.Resource(credentialsRequestGVR).Namespace(ccoNamespace).Delete(t.Context(), name, metav1.DeleteOptions{})
			}
		})
	}
}

// checkCredentialsRequest checks one CredentialsRequest against want: "" absent, "keys" present without STS,
// else present in STS form with that role ARN.
func (e *env) checkCredentialsRequest(ctx context.Context, name, want string) error {
	cr, err := e.credentialsRequest(ctx, name)
	if err != nil {
		return err
	}
	switch {
	case want == "" && cr != nil:
		return fmt.Errorf("CredentialsRequest %s exists, want none", name)
	case want == "":
		return nil
	case cr == nil:
		return fmt.Errorf("CredentialsRequest %s missing", name)
	}
	arn, _, _ := unstructured.NestedString(cr.Object, "spec", "providerSpec", "stsIAMRoleARN")
	path, _, _ := unstructured.NestedString(cr.Object, "spec", "cloudTokenPath")
	if want == "keys" {
		want = ""
	}
	if arn != want || (want != "") != (path == "/var/run/secrets/openshift/serviceaccount/token") {
		return fmt.Errorf("CredentialsRequest %s: stsIAMRoleARN %q cloudTokenPath %q, want ARN %q", name, arn, path, want)
	}
	return nil
}

// wantDisabled checks that controller reports its CredentialsRequest as not wanted, naming env.
func (e *env) wantDisabled(ctx context.Context, controller, env string) error {
	c, err := e.condition(ctx, controller+"Available")
	if err != nil {
		return err
	}
	if c.Status != opv1.ConditionTrue || c.Reason != "CredentialsDisabled" || !strings.Contains(c.Message, env+" is not set") {
		return fmt.Errorf("%sAvailable = %s %s %q, want True CredentialsDisabled naming %s", controller, c.Status, c.Reason, c.Message, env)
	}
	return nil
}

// openShiftCredentialsRequest is the controller CredentialsRequest as OpenShift's 5.0 operator applies it
// (openshift/csi-operator@f7f9dc59603d190abbcda1ae818f489c9dc2f167
// assets/overlays/aws-efs/generated/standalone/credentials.yaml, secretRef.namespace filled): no
// serviceAccountNames, so its spec, and the spec hash library-go records, differ from ours.
const openShiftCredentialsRequest = `apiVersion: cloudcredential.openshift.io/v1
kind: CredentialsRequest
metadata:
  name: openshift-aws-efs-csi-driver
  namespace: openshift-cloud-credential-operator
spec:
  providerSpec:
    apiVersion: cloudcredential.openshift.io/v1
    kind: AWSProviderSpec
    statementEntries:
    - action:
      - elasticfilesystem:*
      - ec2:DescribeAvailabilityZones
      effect: Allow
      resource: '*'
  secretRef:
    name: aws-efs-cloud-credentials
    namespace: openshift-cluster-csi-drivers
`

// TestCredentialsRequestAdoptedWithoutRewrites starts from the CredentialsRequest OpenShift's operator applied with
// library-go (its spec-hash annotation with it). This operator updates it to its own spec once, and then writes it
// no more: library-go's apply copies only the spec and would otherwise find the old hash, and PUT, on every sync.
func TestCredentialsRequestAdoptedWithoutRewrites(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.setCredentialsMode(opv1.CloudCredentialsModeMint)
	theirs := ok(resourceread.ReadGenericWithUnstructured([]byte(openShiftCredentialsRequest)))(t).(*unstructured.Unstructured)
	created, _, err := resourceapply.ApplyCredentialsRequest(ctx, e.dyn, events.NewInMemoryRecorder("openshift-operator", clock.RealClock{}), theirs, -1)
	if err != nil {
		t.Fatal(err)
	}
	op := e.startOperator(testConfig())
	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, time.Minute, "our spec applied to the adopted CredentialsRequest", func(ctx context.Context) error {
		cr, err := e.credentialsRequest(ctx, controllerCR)
		if err != nil || cr == nil {
			return fmt.Errorf("CredentialsRequest %s: %v", controllerCR, err)
		}
		if cr.GetUID() != created.GetUID() {
			return fmt.Errorf("CredentialsRequest recreated")
		}
		if sas, _, _ := unstructured.NestedStringSlice(cr.Object, "spec", "serviceAccountNames"); len(sas) == 0 {
			return fmt.Errorf("spec.serviceAccountNames not applied yet")
		}
		return nil
	})
	// The generation the controller applied is recorded in the ClusterCSIDriver's status (library-go's apply compares
	// it; a sync that reads the status before that record reaches the informer applies once more).
	eventually(t, time.Minute, "the CredentialsRequest's generation recorded", func(ctx context.Context) error {
		cr, err := e.credentialsRequest(ctx, controllerCR)
		if err != nil || cr == nil {
			return fmt.Errorf("CredentialsRequest %s: %v", controllerCR, err)
		}
		driver, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, crName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, g := range driver.Status.Generations {
			if g.Resource == "credentialsrequests" && g.Name == controllerCR && g.LastGeneration == cr.GetGeneration() {
				return nil
			}
		}
		return fmt.Errorf("generation %d of CredentialsRequest %s not in status.generations %v", cr.GetGeneration(), controllerCR, driver.Status.Generations)
	})
	time.Sleep(2 * time.Second)
	// Two resyncs of the credentials controllers with nothing to change: no write to a CredentialsRequest.
	n := op.writes.count()
	time.Sleep(2*resync + 5*time.Second)
	var rewrites []string
	for _, w := range op.writes.since(n) {
		if strings.Contains(w, "/credentialsrequests") {
			rewrites = append(rewrites, w)
		}
	}
	if len(rewrites) > 0 {
		t.Fatalf("CredentialsRequests written on resync with nothing changed: %v", rewrites)
	}
	e.deleteClusterCSIDriver()
}
