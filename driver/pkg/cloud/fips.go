package cloud

import (
	"errors"
	"fmt"
	"strings"
)

// ErrFIPSRegion means FIPS endpoints were asked for in a region that has none.
var ErrFIPSRegion = errors.New("FIPS endpoints are not available in this region")

// CheckFIPSRegion refuses AWS_USE_FIPS_ENDPOINT=true (any case) outside the US and Canada regions, where AWS has no
// FIPS endpoints, with an error that says what to change instead of a DNS failure on every call. Upstream v3.4.1
// makes the same check when it builds its clients (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd pkg/cloud/cloud.go
// validateFIPSRegion: regions starting with "us-" or "ca-", which includes GovCloud).
func CheckFIPSRegion(region string, getenv func(string) string) error {
	if !strings.EqualFold(getenv("AWS_USE_FIPS_ENDPOINT"), "true") {
		return nil
	}
	if strings.HasPrefix(region, "us-") || strings.HasPrefix(region, "ca-") {
		return nil
	}
	return fmt.Errorf("%w: AWS_USE_FIPS_ENDPOINT=true with region %q: FIPS endpoints exist only in US and Canada regions "+
		"(us-*, ca-*); set AWS_USE_FIPS_ENDPOINT=false or run in such a region", ErrFIPSRegion, region)
}
