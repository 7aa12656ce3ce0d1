package scparams

import (
	"fmt"
	"regexp"
	"strconv"
)

// Provisioner/deleter secret keys (csi.storage.k8s.io/provisioner-secret-*, deleter-secret-*).
const (
	SecretRoleARN      = "awsRoleArn"
	SecretExternalID   = "externalId"
	SecretCrossAccount = "crossaccount"
)

var roleARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}$`)

// CrossAccount is what the provisioner and deleter secrets ask for.
type CrossAccount struct {
	// RoleARN is the role to assume; "" means the driver's own identity.
	RoleARN string
	// ExternalID is passed to AssumeRole when non-empty. Secret: never logged.
	ExternalID string
	// DNSByAZID asks the node to mount by AZ-ID DNS name (crossaccount=true).
	DNSByAZID bool
}

// ParseSecrets reads the cross-account keys of a provisioner or deleter secret; other keys are ignored. Errors
// name the key and the accepted form but never the value: nothing from a Secret reaches an error, event or log.
// An externalId without awsRoleArn is ignored, as upstream does (it only means something to AssumeRole).
func ParseSecrets(secrets map[string]string) (CrossAccount, error) {
	var ca CrossAccount
	if v, ok := secrets[SecretRoleARN]; ok && v != "" {
		if !roleARNPattern.MatchString(v) {
			return CrossAccount{}, fmt.Errorf("%w: secret key %s: the value is not a role ARN: want arn:aws:iam::<12-digit account>:role/<name>",
				ErrInvalidParameter, SecretRoleARN)
		}
		ca.RoleARN = v
	}
	if ca.RoleARN != "" {
		ca.ExternalID = secrets[SecretExternalID]
	}
	if v, ok := secrets[SecretCrossAccount]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return CrossAccount{}, fmt.Errorf("%w: secret key %s: the value is not a boolean: want true or false", ErrInvalidParameter, SecretCrossAccount)
		}
		ca.DNSByAZID = b
	}
	return ca, nil
}
