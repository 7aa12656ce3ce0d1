package cloud

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

func startFake(t *testing.T, o fakeaws.Options) *fakeaws.Server {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEAWSCLOUD0001")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := fakeaws.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestForRoleCachesClientsAndRefreshesCredentials(t *testing.T) {
	s := startFake(t, fakeaws.Options{CredentialDuration: 1500 * time.Millisecond})
	fsID := s.AddFileSystem(fakeaws.FileSystem{})
	role := "arn:aws:iam::210987654321:role/efs"
	s.AddRole(role, "ext")
	p, err := NewProvider(t.Context(), Options{Region: "us-east-1", Endpoint: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	c := p.ForRole(role, "ext")
	if p.ForRole(role, "ext") != c {
		t.Fatal("same role and external ID gave a new client")
	}
	if p.ForRole(role, "other") == c || p.ForRole(role, "") == c || p.Own() == c {
		t.Fatal("a different external ID, no external ID or the own identity shared the role's client")
	}
	for range 3 {
		if _, err := c.DescribeFileSystem(t.Context(), fsID); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Calls("AssumeRole"); n != 1 {
		t.Fatalf("AssumeRole called %d times for 3 calls, want 1", n)
	}
	time.Sleep(2 * time.Second) // let the 1.5s credentials expire
	if _, err := c.DescribeFileSystem(t.Context(), fsID); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if n := s.Calls("AssumeRole"); n != 2 {
		t.Fatalf("AssumeRole called %d times after expiry, want 2 (one refresh)", n)
	}
	if keys := s.AssumedRoleKeys(role); len(keys) != 2 {
		t.Fatalf("role keys %v, want two generations", keys)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		code string
		want error
	}{
		{"ThrottlingException", ErrThrottled},
		{"TooManyRequests", ErrThrottled},
		{"AccessDeniedException", ErrAccessDenied},
		{"ValidationException", ErrBadRequest},
		{"SomethingNew", ErrUnavailable},
	}
	for _, tt := range tests {
		err := classify("Op", "fs-1", &smithy.GenericAPIError{Code: tt.code})
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), "Op fs-1") {
			t.Errorf("classify(%s) = %v, want %v", tt.code, err, tt.want)
		}
	}
}

func TestResolveMetadata(t *testing.T) {
	s := startFake(t, fakeaws.Options{InstanceZone: "us-east-1b"})
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	imdsClient, err := NewIMDSClient(t.Context(), s.URL())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	_ = l.Close()
	unreachable, err := NewIMDSClient(t.Context(), closed)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      MetadataInput
		client  imdsAPI
		want    Metadata
		wantErr string
	}{
		{"flags win, no IMDS call", MetadataInput{Region: "eu-west-1", Zone: "eu-west-1a"}, imdsClient,
			Metadata{Region: "eu-west-1", Zone: "eu-west-1a", Source: "flags"}, ""},
		{"imds", MetadataInput{EnvRegion: "ap-south-1"}, imdsClient,
			Metadata{Region: "us-east-1", Zone: "us-east-1b", ZoneID: "use1-az2", InstanceID: "i-0123456789abcdef0", Source: "imds"}, ""},
		{"flag region, imds zone", MetadataInput{Region: "us-east-1"}, imdsClient,
			Metadata{Region: "us-east-1", Zone: "us-east-1b", ZoneID: "use1-az2", InstanceID: "i-0123456789abcdef0", Source: "imds"}, ""},
		{"unreachable imds, env region", MetadataInput{EnvRegion: "ap-south-1", Timeout: time.Second}, unreachable,
			Metadata{Region: "ap-south-1", Source: "environment"}, ""},
		{"no imds client, flag region", MetadataInput{Region: "us-west-2"}, nil, Metadata{Region: "us-west-2", Source: "flags"}, ""},
		{"nothing", MetadataInput{Timeout: time.Second}, unreachable, Metadata{}, "set --region or AWS_REGION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.ResetCalls()
			got, err := ResolveMetadata(t.Context(), tt.in, tt.client)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ResolveMetadata = %+v, %v; want %+v", got, err, tt.want)
			}
			if tt.in.Region != "" && tt.in.Zone != "" && s.Calls("GetMetadata") != 0 {
				t.Error("called IMDS although flags gave region and zone")
			}
		})
	}
}

// TestTransientErrorsAreUnavailable: states that pass by themselves (a file system still being created, expired
// temporary credentials about to be refreshed) are ErrUnavailable, so the provisioner retries instead of failing
// the claim.
func TestTransientErrorsAreUnavailable(t *testing.T) {
	for _, tt := range []struct {
		code string
		want error
	}{
		{"IncorrectFileSystemLifeCycleState", ErrUnavailable},
		{"IncorrectMountTargetState", ErrUnavailable},
		{"ExpiredToken", ErrUnavailable},
		{"ExpiredTokenException", ErrUnavailable},
		{"ThrottlingException", ErrThrottled},
		{"AccessDeniedException", ErrAccessDenied},
		{"ValidationException", ErrBadRequest},
	} {
		err := classify("CreateAccessPoint", "fs-1", &smithy.GenericAPIError{Code: tt.code})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.code, err, tt.want)
		}
	}
}
