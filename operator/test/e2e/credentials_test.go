package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
