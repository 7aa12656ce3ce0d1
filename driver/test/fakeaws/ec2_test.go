package fakeaws

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

func TestDescribeAvailabilityZones(t *testing.T) {
	s := startServer(t, Options{Region: "eu-west-3"})
	c := ec2Client(s)
	rows := []struct {
		name     string
		input    ec2.DescribeAvailabilityZonesInput
		want     string
		wantCode string
	}{
		{"all", ec2.DescribeAvailabilityZonesInput{}, "[eu-west-3a/euw3-az1 eu-west-3b/euw3-az2 eu-west-3c/euw3-az3]", ""},
		{"by name", ec2.DescribeAvailabilityZonesInput{ZoneNames: []string{"eu-west-3b"}}, "[eu-west-3b/euw3-az2]", ""},
		{"by ID", ec2.DescribeAvailabilityZonesInput{ZoneIds: []string{"euw3-az3", "euw3-az1"}}, "[eu-west-3a/euw3-az1 eu-west-3c/euw3-az3]", ""},
		{"filter zone-name", ec2.DescribeAvailabilityZonesInput{Filters: []ec2types.Filter{{Name: aws.String("zone-name"), Values: []string{"eu-west-3c"}}}}, "[eu-west-3c/euw3-az3]", ""},
		{"filter zone-id wildcard", ec2.DescribeAvailabilityZonesInput{Filters: []ec2types.Filter{{Name: aws.String("zone-id"), Values: []string{"*az2"}}}}, "[eu-west-3b/euw3-az2]", ""},
		{"unknown zone", ec2.DescribeAvailabilityZonesInput{ZoneNames: []string{"eu-west-3z"}}, "", "InvalidParameterValue"},
		{"unknown filter", ec2.DescribeAvailabilityZonesInput{Filters: []ec2types.Filter{{Name: aws.String("color"), Values: []string{"x"}}}}, "", "InvalidParameterValue"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			out, err := c.DescribeAvailabilityZones(t.Context(), &row.input)
			if row.wantCode != "" {
				var apiErr smithy.APIError
				if !errors.As(err, &apiErr) || apiErr.ErrorCode() != row.wantCode {
					t.Fatalf("err = %v, want code %s", err, row.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("DescribeAvailabilityZones: %v", err)
			}
			var got []string
			for _, z := range out.AvailabilityZones {
				got = append(got, aws.ToString(z.ZoneName)+"/"+aws.ToString(z.ZoneId))
				if aws.ToString(z.RegionName) != "eu-west-3" || z.State != ec2types.AvailabilityZoneStateAvailable {
					t.Errorf("zone %+v", z)
				}
			}
			if fmt.Sprint(got) != row.want {
				t.Errorf("zones = %v, want %s", got, row.want)
			}
		})
	}
}
