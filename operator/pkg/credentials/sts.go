package credentials

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/openshift/aws-efs-csi/operator/pkg/config"
)

// CloudTokenPath is where the driver pods mount their projected service account token (audience "openshift").
const CloudTokenPath = "/var/run/secrets/openshift/serviceaccount/token"

// SetSTS turns cr into its STS form for roleARN: spec.cloudTokenPath and spec.providerSpec.stsIAMRoleARN. An empty
// roleARN leaves cr unchanged. envName names the variable the ARN came from, for the error of a malformed ARN.
func SetSTS(cr *unstructured.Unstructured, envName, roleARN string) error {
	if roleARN == "" {
		return nil
	}
	if _, err := config.ParseRoleARN(envName, roleARN); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(cr.Object, CloudTokenPath, "spec", "cloudTokenPath"); err != nil {
		return fmt.Errorf("CredentialsRequest %s: setting spec.cloudTokenPath: %w", cr.GetName(), err)
	}
	if err := unstructured.SetNestedField(cr.Object, roleARN, "spec", "providerSpec", "stsIAMRoleARN"); err != nil {
		return fmt.Errorf("CredentialsRequest %s: setting spec.providerSpec.stsIAMRoleARN: %w", cr.GetName(), err)
	}
	return nil
}
