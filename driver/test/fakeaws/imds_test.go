package fakeaws

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

func TestIMDS(t *testing.T) {
	s := startServer(t, Options{Region: "us-west-2", InstanceZone: "us-west-2c", InstanceID: "i-0fedcba9876543210"})
	c := imds.New(imds.Options{Endpoint: s.URL(), EnableFallback: aws.FalseTernary /* IMDSv2 only */})
	ctx := t.Context()
	for path, want := range map[string]string{
		"placement/availability-zone":    "us-west-2c",
		"placement/availability-zone-id": "usw2-az3",
		"placement/region":               "us-west-2",
		"instance-id":                    "i-0fedcba9876543210",
	} {
		out, err := c.GetMetadata(ctx, &imds.GetMetadataInput{Path: path})
		if err != nil {
			t.Fatalf("GetMetadata(%s): %v", path, err)
		}
		b, _ := io.ReadAll(out.Content)
		if string(b) != want {
			t.Errorf("GetMetadata(%s) = %q, want %q", path, b, want)
		}
	}
	doc, err := c.GetInstanceIdentityDocument(ctx, nil)
	if err != nil {
		t.Fatalf("GetInstanceIdentityDocument: %v", err)
	}
	if doc.Region != "us-west-2" || doc.AvailabilityZone != "us-west-2c" || doc.InstanceID != "i-0fedcba9876543210" ||
		doc.AccountID != "123456789012" {
		t.Errorf("identity document = %+v", doc)
	}
	region, err := c.GetRegion(ctx, nil)
	if err != nil || region.Region != "us-west-2" {
		t.Errorf("GetRegion = %+v, %v", region, err)
	}
	if s.Calls("GetMetadataToken") < 1 || s.Calls("GetMetadata") < 6 {
		t.Errorf("calls = %v", s.CallCounts())
	}
}

// TestIMDSv2Enforced checks the token rules with plain HTTP: no token, a bad token and a bad TTL are refused.
func TestIMDSv2Enforced(t *testing.T) {
	s := startServer(t, Options{})
	do := func(method, path string, headers map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, s.URL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const zonePath = "/latest/meta-data/placement/availability-zone"
	rows := []struct {
		name, method, path string
		headers            map[string]string
		want               int
	}{
		{"GET without token", "GET", zonePath, nil, 401},
		{"GET with unknown token", "GET", zonePath, map[string]string{"X-aws-ec2-metadata-token": "nope"}, 401},
		{"token without TTL", "PUT", "/latest/api/token", nil, 400},
		{"token TTL too long", "PUT", "/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "21601"}, 400},
		{"token through a proxy", "PUT", "/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60", "X-Forwarded-For": "1.2.3.4"}, 403},
	}
	for _, row := range rows {
		if got, _ := do(row.method, row.path, row.headers); got != row.want {
			t.Errorf("%s: status %d, want %d", row.name, got, row.want)
		}
	}
	code, token := do("PUT", "/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60"})
	if code != 200 || !strings.HasPrefix(token, "AQAEA") {
		t.Fatalf("token: %d %q", code, token)
	}
	code, zone := do("GET", zonePath, map[string]string{"X-aws-ec2-metadata-token": token})
	if code != 200 || zone != "us-east-1a" {
		t.Errorf("zone with token: %d %q, want 200 us-east-1a", code, zone)
	}
	if code, _ := do("GET", "/latest/meta-data/nothing-here", map[string]string{"X-aws-ec2-metadata-token": token}); code != 404 {
		t.Errorf("unknown path: %d, want 404", code)
	}
}
