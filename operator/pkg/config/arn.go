package config

import (
	"fmt"
	"regexp"
)

// roleARNRE is an IAM role ARN: arn:<partition>:iam::<12-digit account>:role/<optional path/><name>. Role names
// and paths use [A-Za-z0-9+=,.@_-]; the whole name is at most 64 characters.
//
// The partition is checked by its shape, not against a list: "aws" optionally followed by lower-case words joined
// with "-". AWS adds partitions (aws-sdk-go-v2 v1.47.6 internal/endpoints/awsrulesfn/partitions.json lists aws,
// aws-cn, aws-eusc, aws-iso, aws-iso-b, aws-iso-e, aws-iso-f and aws-us-gov), and OpenShift's operator
// (openshift/csi-operator pkg/driver/aws-efs, stsCredentialsRequestHook) copies ROLEARN into the CredentialsRequest
// without looking at the partition at all; a list here would refuse clusters in the next partition.
var roleARNRE = regexp.MustCompile(`^arn:(aws(?:-[a-z0-9]+)*):iam::([0-9]{12}):role/((?:[A-Za-z0-9+=,.@_-]+/)*)([A-Za-z0-9+=,.@_-]{1,64})$`)

// RoleARNForm is the accepted form of ROLEARN and NODE_ROLEARN, shown in error messages.
const RoleARNForm = "arn:aws:iam::<12-digit account>:role/<name> (partition aws or aws-<name>, such as aws-us-gov, aws-cn or aws-iso-b)"

// RoleARN is a parsed IAM role ARN.
type RoleARN struct {
	Partition string
	AccountID string
	// Path is the role path without the leading "/" and with its trailing "/", or empty.
	Path string
	Name string
}

// String formats the ARN back to its canonical text.
func (r RoleARN) String() string {
	return "arn:" + r.Partition + ":iam::" + r.AccountID + ":role/" + r.Path + r.Name
}

// ParseRoleARN parses value, the content of the environment variable env, as an IAM role ARN. The error names the
// variable, the value and the accepted form.
func ParseRoleARN(env, value string) (RoleARN, error) {
	m := roleARNRE.FindStringSubmatch(value)
	if m == nil {
		return RoleARN{}, fmt.Errorf("%s %q is not an IAM role ARN: want %s", env, value, RoleARNForm)
	}
	return RoleARN{Partition: m[1], AccountID: m[2], Path: m[3], Name: m[4]}, nil
}
