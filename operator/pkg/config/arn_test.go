package config

import (
	"strings"
	"testing"
)

func TestParseRoleARN(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    RoleARN
		wantErr bool
	}{
		{name: "commercial", value: "arn:aws:iam::269733383066:role/my-role", want: RoleARN{Partition: "aws", AccountID: "269733383066", Name: "my-role"}},
		{name: "govcloud", value: "arn:aws-us-gov:iam::123456789012:role/efs", want: RoleARN{Partition: "aws-us-gov", AccountID: "123456789012", Name: "efs"}},
		{name: "china", value: "arn:aws-cn:iam::123456789012:role/efs", want: RoleARN{Partition: "aws-cn", AccountID: "123456789012", Name: "efs"}},
		{name: "with path", value: "arn:aws:iam::123456789012:role/ocp/storage/efs-node", want: RoleARN{Partition: "aws", AccountID: "123456789012", Path: "ocp/storage/", Name: "efs-node"}},
		{name: "ccO-style name", value: "arn:aws:iam::269733383066:role/jsafrane-1-l2mqv-openshift-cluster-csi-drivers-aws-efs-cloud-cre", want: RoleARN{Partition: "aws", AccountID: "269733383066", Name: "jsafrane-1-l2mqv-openshift-cluster-csi-drivers-aws-efs-cloud-cre"}},
		{name: "iso", value: "arn:aws-iso:iam::123456789012:role/efs", want: RoleARN{Partition: "aws-iso", AccountID: "123456789012", Name: "efs"}},
		{name: "iso-b", value: "arn:aws-iso-b:iam::123456789012:role/efs", want: RoleARN{Partition: "aws-iso-b", AccountID: "123456789012", Name: "efs"}},
		{name: "eusc", value: "arn:aws-eusc:iam::123456789012:role/efs", want: RoleARN{Partition: "aws-eusc", AccountID: "123456789012", Name: "efs"}},
		{name: "short account", value: "arn:aws:iam::12345:role/efs", wantErr: true},
		{name: "user not role", value: "arn:aws:iam::123456789012:user/efs", wantErr: true},
		{name: "not an aws partition", value: "arn:azure:iam::123456789012:role/efs", wantErr: true},
		{name: "partition with upper case", value: "arn:aws-ISO:iam::123456789012:role/efs", wantErr: true},
		{name: "partition with empty word", value: "arn:aws--iso:iam::123456789012:role/efs", wantErr: true},
		{name: "partition ending in a dash", value: "arn:aws-:iam::123456789012:role/efs", wantErr: true},
		{name: "sts assumed role", value: "arn:aws:sts::123456789012:assumed-role/efs/i-1", wantErr: true},
		{name: "bare name", value: "efs-role", wantErr: true},
		{name: "trailing space", value: "arn:aws:iam::123456789012:role/efs ", wantErr: true},
		{name: "name too long", value: "arn:aws:iam::123456789012:role/" + strings.Repeat("a", 65), wantErr: true},
		{name: "empty", value: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRoleARN("NODE_ROLEARN", tc.value)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ParseRoleARN(%q) = %+v, want an error", tc.value, got)
				}
				for _, part := range []string{"NODE_ROLEARN", "arn:aws:iam::<12-digit account>:role/<name>"} {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not contain %q", err, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRoleARN(%q): %v", tc.value, err)
			}
			if got != tc.want {
				t.Fatalf("ParseRoleARN(%q) = %+v, want %+v", tc.value, got, tc.want)
			}
			if got.String() != tc.value {
				t.Fatalf("String() = %q, want %q", got.String(), tc.value)
			}
		})
	}
}

func FuzzParseRoleARN(f *testing.F) {
	for _, s := range []string{"arn:aws:iam::269733383066:role/my-role", "arn:aws-cn:iam::123456789012:role/a/b/c", "arn:aws:iam::1:role/x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRoleARN("ROLEARN", s)
		if err != nil {
			return
		}
		if r.String() != s {
			t.Fatalf("parse-then-format of %q gave %q", s, r.String())
		}
	})
}
