package cloud

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckFIPSRegion states upstream v3.4.1's validateFIPSRegion (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd
// pkg/cloud/cloud.go): with AWS_USE_FIPS_ENDPOINT=true (case-insensitive) only us-* and ca-* regions are accepted.
func TestCheckFIPSRegion(t *testing.T) {
	for _, tc := range []struct {
		env, region string
		ok          bool
	}{
		{"", "eu-west-1", true},
		{"false", "eu-west-1", true},
		{"true", "us-east-1", true},
		{"TRUE", "us-gov-west-1", true},
		{"true", "ca-central-1", true},
		{"true", "eu-west-1", false},
		{"True", "ap-southeast-2", false},
		{"true", "eusc-de-east-1", false},
		{"true", "", false},
	} {
		err := CheckFIPSRegion(tc.region, func(k string) string {
			if k == "AWS_USE_FIPS_ENDPOINT" {
				return tc.env
			}
			return ""
		})
		if tc.ok != (err == nil) {
			t.Errorf("AWS_USE_FIPS_ENDPOINT=%q region %q: %v, want ok=%v", tc.env, tc.region, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrFIPSRegion) || !strings.Contains(err.Error(), tc.region) || !strings.Contains(err.Error(), "AWS_USE_FIPS_ENDPOINT=false")) {
			t.Errorf("error %q should name the region and the fix", err)
		}
	}
}

// TestNewProviderRefusesFIPSOutsideUSAndCanada: the controller's clients are not built for such a region.
func TestNewProviderRefusesFIPSOutsideUSAndCanada(t *testing.T) {
	t.Setenv("AWS_USE_FIPS_ENDPOINT", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	if _, err := NewProvider(t.Context(), Options{Region: "eu-central-1"}); !errors.Is(err, ErrFIPSRegion) {
		t.Fatalf("NewProvider(eu-central-1) with FIPS = %v, want ErrFIPSRegion", err)
	}
	if _, err := NewProvider(t.Context(), Options{Region: "us-east-2"}); err != nil {
		t.Fatalf("NewProvider(us-east-2) with FIPS = %v", err)
	}
}
