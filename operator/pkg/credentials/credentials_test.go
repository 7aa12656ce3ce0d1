package credentials

import (
	"strings"
	"testing"

	opv1 "github.com/openshift/api/operator/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

func TestWanted(t *testing.T) {
	const arn = "arn:aws:iam::123456789012:role/efs"
	tests := []struct {
		mode    opv1.CloudCredentialsMode
		roleARN string
		want    bool
	}{
		{opv1.CloudCredentialsModeDefault, "", true},
		{opv1.CloudCredentialsModeMint, "", true},
		{opv1.CloudCredentialsModePassthrough, "", true},
		{opv1.CloudCredentialsModeMint, arn, true},
		{opv1.CloudCredentialsModeManual, "", false},
		{opv1.CloudCredentialsModeManual, arn, true},
	}
	for _, tc := range tests {
		if got := Wanted(tc.mode, tc.roleARN); got != tc.want {
			t.Errorf("Wanted(%q, %q) = %v, want %v", tc.mode, tc.roleARN, got, tc.want)
		}
	}
}

func shipped(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := assets.Render(name, map[string]string{assets.Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSetSTSOnShippedRequests(t *testing.T) {
	tests := []struct {
		name    string
		asset   string
		env     string
		arn     string
		wantARN string
		wantErr string
	}{
		{name: "controller, mint", asset: assets.CredentialsRequest, env: "ROLEARN", arn: ""},
		{name: "controller, STS", asset: assets.CredentialsRequest, env: "ROLEARN", arn: "arn:aws:iam::123456789012:role/c", wantARN: "arn:aws:iam::123456789012:role/c"},
		{name: "node, STS gov", asset: assets.NodeCredentialsRequest, env: "NODE_ROLEARN", arn: "arn:aws-us-gov:iam::123456789012:role/n", wantARN: "arn:aws-us-gov:iam::123456789012:role/n"},
		{name: "node, malformed", asset: assets.NodeCredentialsRequest, env: "NODE_ROLEARN", arn: "arn:aws:iam::123:role/n", wantErr: `NODE_ROLEARN "arn:aws:iam::123:role/n" is not an IAM role ARN: want arn:aws:iam::<12-digit account>:role/<name>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cr := shipped(t, tc.asset)
			err := SetSTS(cr, tc.env, tc.arn)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotARN, _, _ := unstructured.NestedString(cr.Object, "spec", "providerSpec", "stsIAMRoleARN")
			gotPath, _, _ := unstructured.NestedString(cr.Object, "spec", "cloudTokenPath")
			if gotARN != tc.wantARN {
				t.Errorf("stsIAMRoleARN = %q, want %q", gotARN, tc.wantARN)
			}
			if (tc.wantARN != "") != (gotPath == CloudTokenPath) {
				t.Errorf("cloudTokenPath = %q with ARN %q", gotPath, tc.wantARN)
			}
			// The statement entries stay as shipped.
			entries, _, _ := unstructured.NestedSlice(cr.Object, "spec", "providerSpec", "statementEntries")
			if len(entries) != 1 {
				t.Errorf("statementEntries = %v", entries)
			}
		})
	}
}

func TestShippedNodeRequestIsMinimal(t *testing.T) {
	cr := shipped(t, assets.NodeCredentialsRequest)
	if got := cr.GetAnnotations()["credentials.openshift.io/role-arns-vars"]; got != "NODE_ROLEARN" {
		t.Errorf("role-arns-vars annotation = %q", got)
	}
	entries, _, _ := unstructured.NestedSlice(cr.Object, "spec", "providerSpec", "statementEntries")
	actions, _, _ := unstructured.NestedStringSlice(entries[0].(map[string]any), "action")
	if strings.Join(actions, ",") != "elasticfilesystem:DescribeMountTargets,ec2:DescribeAvailabilityZones" {
		t.Errorf("node actions = %v, want only DescribeMountTargets and DescribeAvailabilityZones", actions)
	}
	secret, _, _ := unstructured.NestedString(cr.Object, "spec", "secretRef", "name")
	if secret != "node-aws-efs-cloud-credentials" {
		t.Errorf("secret = %q", secret)
	}
}
