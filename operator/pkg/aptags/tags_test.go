package aptags

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTagsHash(t *testing.T) {
	tags := []configv1.AWSResourceTag{{Key: "team", Value: "storage"}, {Key: "cost", Value: "42"}}
	sum := sha256.Sum256([]byte("cost=42;team=storage;"))
	if got, want := TagsHash(tags), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("TagsHash = %s, want %s (OpenShift's operator's hash)", got, want)
	}
	if tags[0].Key != "team" {
		t.Fatal("TagsHash reordered its argument, which may be a lister's cached object")
	}
	if TagsHash([]configv1.AWSResourceTag{tags[1], tags[0]}) != TagsHash(tags) {
		t.Fatal("TagsHash depends on order")
	}
	if TagsHash(nil) == TagsHash(tags) {
		t.Fatal("no tags hash like some tags")
	}
}

func TestNeedsTags(t *testing.T) {
	hash := TagsHash([]configv1.AWSResourceTag{{Key: "k", Value: "v"}})
	pv := func(driver, handle, annotation string) *corev1.PersistentVolume {
		p := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}}}}
		if annotation != "" {
			p.Annotations = map[string]string{HashAnnotation: annotation}
		}
		return p
	}
	tests := []struct {
		name string
		pv   *corev1.PersistentVolume
		want bool
	}{
		{name: "access point, never tagged", pv: pv(DriverName, "fs-1::fsap-1", ""), want: true},
		{name: "access point, older tags", pv: pv(DriverName, "fs-1::fsap-1", "0ld"), want: true},
		{name: "access point, up to date", pv: pv(DriverName, "fs-1::fsap-1", hash)},
		{name: "file system only", pv: pv(DriverName, "fs-1", "")},
		{name: "sub-path handle", pv: pv(DriverName, "fs-1:/dir", "")},
		{name: "other driver", pv: pv("ebs.csi.aws.com", "fs-1::fsap-1", "")},
		{name: "not CSI", pv: &corev1.PersistentVolume{}},
	}
	for _, tc := range tests {
		if got := NeedsTags(tc.pv, hash); got != tc.want {
			t.Errorf("%s: NeedsTags = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestActiveOnlyOnHyperShiftWithTags(t *testing.T) {
	infra := func(label string, tags []configv1.AWSResourceTag) *configv1.Infrastructure {
		i := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Status: configv1.InfrastructureStatus{
			PlatformStatus: &configv1.PlatformStatus{Type: configv1.AWSPlatformType, AWS: &configv1.AWSPlatformStatus{Region: "us-east-1", ResourceTags: tags}}}}
		if label != "" {
			i.Labels = map[string]string{HyperShiftLabel: label}
		}
		return i
	}
	tags := []configv1.AWSResourceTag{{Key: "k", Value: "v"}}
	tests := []struct {
		name  string
		infra *configv1.Infrastructure
		want  bool
	}{
		{name: "HyperShift guest with tags", infra: infra("true", tags), want: true},
		{name: "HyperShift guest, empty tag list", infra: infra("true", []configv1.AWSResourceTag{}), want: true},
		{name: "HyperShift guest, no tags", infra: infra("true", nil)},
		{name: "standalone cluster", infra: infra("", tags)},
		{name: "label false", infra: infra("false", tags)},
		{name: "no AWS status", infra: &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{HyperShiftLabel: "true"}}}},
	}
	for _, tc := range tests {
		if _, got := active(tc.infra); got != tc.want {
			t.Errorf("%s: active = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIdentityFrom(t *testing.T) {
	infra := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Status: configv1.InfrastructureStatus{
		PlatformStatus: &configv1.PlatformStatus{AWS: &configv1.AWSPlatformStatus{Region: "us-gov-west-1", ServiceEndpoints: []configv1.AWSServiceEndpoint{
			{Name: "elasticfilesystem", URL: "https://efs.example"}, {Name: "sts", URL: "https://sts.example"}, {Name: "ec2", URL: "https://ec2.example"}}}}}}
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: CredentialsSecret}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	sts := "[default]\nrole_arn = arn:aws:iam::123456789012:role/efs\nweb_identity_token_file = /var/run/secrets/openshift/serviceaccount/token\n"
	tests := []struct {
		name      string
		secret    *corev1.Secret
		tokenFile string
		want      identity
		wantErr   string
	}{
		{name: "STS with the operator's token", secret: secret(map[string]string{"credentials": sts}), tokenFile: "/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
			want: identity{region: "us-gov-west-1", efsEndpoint: "https://efs.example", stsEndpoint: "https://sts.example",
				roleARN: "arn:aws:iam::123456789012:role/efs", tokenFile: "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"}},
		{name: "STS without the operator's token uses the INI's", secret: secret(map[string]string{"credentials": sts}),
			want: identity{region: "us-gov-west-1", efsEndpoint: "https://efs.example", stsEndpoint: "https://sts.example",
				roleARN: "arn:aws:iam::123456789012:role/efs", tokenFile: "/var/run/secrets/openshift/serviceaccount/token"}},
		{name: "role without any token", secret: secret(map[string]string{"credentials": "[default]\nrole_arn = arn:aws:iam::123456789012:role/efs\n"}),
			wantErr: "AWS_WEB_IDENTITY_TOKEN_FILE"},
		{name: "minted keys", secret: secret(map[string]string{"aws_access_key_id": "AKIA1", "aws_secret_access_key": "s"}),
			want: identity{region: "us-gov-west-1", efsEndpoint: "https://efs.example", stsEndpoint: "https://sts.example", accessKey: "AKIA1", secretKey: "s"}},
		{name: "empty Secret", secret: secret(nil), wantErr: "neither a credentials INI with role_arn nor aws_access_key_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := identityFrom(tc.secret, infra, tc.tokenFile)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("identity = %+v, want %+v", got, tc.want)
			}
		})
	}
}
