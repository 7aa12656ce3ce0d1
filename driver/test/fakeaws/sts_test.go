package fakeaws

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

const (
	roleA = "arn:aws:iam::210987654321:role/efs-a"
	roleB = "arn:aws:iam::210987654321:role/efs-b"
)

func TestAssumeRole(t *testing.T) {
	s := startServer(t, Options{})
	s.AddRole(roleA, "ext-a")
	s.AddRole(roleB, "")
	c := stsClient(s, testAccessKey)
	rows := []struct {
		name, role, externalID, wantCode string
	}{
		{"matching external ID", roleA, "ext-a", ""},
		{"wrong external ID", roleA, "ext-b", "AccessDenied"},
		{"missing external ID", roleA, "", "AccessDenied"},
		{"role without condition", roleB, "anything", ""},
		{"unknown role", "arn:aws:iam::210987654321:role/other", "ext-a", "AccessDenied"},
		{"malformed role", "role/efs-a", "", "ValidationError"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			in := &sts.AssumeRoleInput{RoleArn: aws.String(row.role), RoleSessionName: aws.String("csi")}
			if row.externalID != "" {
				in.ExternalId = aws.String(row.externalID)
			}
			out, err := c.AssumeRole(t.Context(), in)
			if row.wantCode != "" {
				var apiErr smithy.APIError
				if !errors.As(err, &apiErr) || apiErr.ErrorCode() != row.wantCode {
					t.Fatalf("err = %v, want code %s", err, row.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("AssumeRole: %v", err)
			}
			if !strings.HasPrefix(aws.ToString(out.Credentials.AccessKeyId), "ASIA") || out.Credentials.Expiration == nil ||
				!strings.HasSuffix(aws.ToString(out.AssumedRoleUser.Arn), ":assumed-role/"+row.role[strings.LastIndex(row.role, "/")+1:]+"/csi") {
				t.Errorf("AssumeRole output = %+v %+v", out.Credentials, out.AssumedRoleUser)
			}
		})
	}
}

// TestCrossAccountCallsUseRoleKeys uses the SDK's assume-role credential provider for EFS calls and checks
// that the fake saw the role's temporary keys, distinct per role, and that GetCallerIdentity names the role.
func TestCrossAccountCallsUseRoleKeys(t *testing.T) {
	s := startServer(t, Options{})
	s.AddRole(roleA, "ext-a")
	s.AddRole(roleB, "ext-b")
	fsID := s.AddFileSystem(FileSystem{})
	base := stsClient(s, testAccessKey)
	ctx := t.Context()
	keys := map[string]string{}
	for role, ext := range map[string]string{roleA: "ext-a", roleB: "ext-b"} {
		cfg := sdkConfig(s, testAccessKey, 1)
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(base, role, func(o *stscreds.AssumeRoleOptions) {
			o.ExternalID = aws.String(ext)
		}))
		s.ResetCalls()
		if _, err := efs.NewFromConfig(cfg).DescribeAccessPoints(ctx, &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)}); err != nil {
			t.Fatalf("DescribeAccessPoints as %s: %v", role, err)
		}
		got := s.CallerAccessKeys("DescribeAccessPoints")
		if len(got) != 1 || !slices.Contains(s.AssumedRoleKeys(role), got[0]) {
			t.Fatalf("DescribeAccessPoints keys %v, role %s keys %v", got, role, s.AssumedRoleKeys(role))
		}
		if ak := s.CallerAccessKeys("AssumeRole"); len(ak) != 1 || ak[0] != testAccessKey {
			t.Errorf("AssumeRole signed by %v, want %s", ak, testAccessKey)
		}
		keys[role] = got[0]
		id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, nil)
		if err != nil || !strings.HasSuffix(aws.ToString(id.Arn), role[strings.LastIndex(role, "/"):]+"/"+aws.ToString(id.UserId)[strings.Index(aws.ToString(id.UserId), ":")+1:]) ||
			aws.ToString(id.Account) != "210987654321" {
			t.Errorf("GetCallerIdentity as %s = %+v, %v", role, id, err)
		}
	}
	if keys[roleA] == keys[roleB] {
		t.Errorf("both roles used access key %s", keys[roleA])
	}
}

func TestAssumeRoleWithWebIdentity(t *testing.T) {
	s := startServer(t, Options{})
	s.AddRole(roleA, "")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("eyJhbGciOiJSUzI1NiJ9.fake.token"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := sdkConfig(s, testAccessKey, 1)
	cfg.Credentials = aws.NewCredentialsCache(stscreds.NewWebIdentityRoleProvider(
		sts.NewFromConfig(cfg), roleA, stscreds.IdentityTokenFile(tokenFile)))
	creds, err := cfg.Credentials.Retrieve(t.Context())
	if err != nil {
		t.Fatalf("web identity credentials: %v", err)
	}
	if !slices.Contains(s.AssumedRoleKeys(roleA), creds.AccessKeyID) || !creds.CanExpire {
		t.Errorf("credentials %s not issued for %s (issued %v)", creds.AccessKeyID, roleA, s.AssumedRoleKeys(roleA))
	}
	if ak := s.CallerAccessKeys("AssumeRoleWithWebIdentity"); len(ak) != 0 {
		t.Errorf("AssumeRoleWithWebIdentity should be unsigned, saw keys %v", ak)
	}
}

// TestExpiredRoleCredentials: calls signed with expired temporary credentials are refused with the service's
// ExpiredToken error, and the SDK's credential cache, refreshing on expiry, gets new keys that work.
func TestExpiredRoleCredentials(t *testing.T) {
	s := startServer(t, Options{CredentialDuration: time.Nanosecond})
	s.AddRole(roleA, "")
	fsID := s.AddFileSystem(FileSystem{})
	out, err := stsClient(s, testAccessKey).AssumeRole(t.Context(), &sts.AssumeRoleInput{
		RoleArn: aws.String(roleA), RoleSessionName: aws.String("old")})
	if err != nil {
		t.Fatalf("AssumeRole: %v", err)
	}
	cfg := sdkConfig(s, testAccessKey, 1)
	cfg.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(out.Credentials.AccessKeyId),
		aws.ToString(out.Credentials.SecretAccessKey), aws.ToString(out.Credentials.SessionToken))
	time.Sleep(1100 * time.Millisecond) // past the one-second grace the fake allows
	_, err = efs.NewFromConfig(cfg).DescribeAccessPoints(t.Context(), &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ExpiredTokenException" {
		t.Fatalf("EFS with expired credentials: err = %v, want ExpiredTokenException", err)
	}
	_, err = ec2.NewFromConfig(cfg).DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{})
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ExpiredToken" {
		t.Fatalf("EC2 with expired credentials: err = %v, want ExpiredToken", err)
	}

	// A refreshing provider: every call after expiry gets new credentials.
	cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient(s, testAccessKey), roleA))
	c := efs.NewFromConfig(cfg)
	s.ResetCalls()
	for range 2 {
		if _, err := c.DescribeAccessPoints(t.Context(), &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)}); err != nil {
			t.Fatalf("DescribeAccessPoints with refreshing credentials: %v", err)
		}
	}
	if n := s.Calls("AssumeRole"); n != 2 {
		t.Errorf("AssumeRole calls = %d, want 2 (one refresh per expired credential)", n)
	}
	if keys := s.CallerAccessKeys("DescribeAccessPoints"); len(keys) != 2 {
		t.Errorf("DescribeAccessPoints keys = %v, want two distinct", keys)
	}
}
