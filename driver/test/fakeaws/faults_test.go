package fakeaws

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/efs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func TestFaultsPerService(t *testing.T) {
	s := startServer(t, Options{})
	fsID := s.AddFileSystem(FileSystem{})
	s.AddRole(roleA, "")
	ctx := t.Context()
	rows := []struct {
		name       string
		api        string
		fault      Fault
		wantCode   string
		wantStatus int
	}{
		{"EFS throttled", "DescribeAccessPoints", Fault{ThrottleProbability: 1}, "ThrottlingException", 429},
		{"EFS 500", "DescribeAccessPoints", Fault{ErrorProbability: 1}, "InternalServerError", 500},
		{"EFS 503", "DescribeAccessPoints", Fault{ErrorProbability: 1, ErrorStatus: 503}, "ServiceUnavailableException", 503},
		{"EC2 throttled", "DescribeAvailabilityZones", Fault{ThrottleProbability: 1}, "RequestLimitExceeded", 503},
		{"EC2 500", "DescribeAvailabilityZones", Fault{ErrorProbability: 1}, "InternalError", 500},
		{"STS throttled", "AssumeRole", Fault{ThrottleProbability: 1}, "Throttling", 400},
		{"STS 503", "AssumeRole", Fault{ErrorProbability: 1, ErrorStatus: 503}, "ServiceUnavailable", 503},
		{"all operations", "*", Fault{ThrottleProbability: 1}, "ThrottlingException", 429},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s.SetFault(row.api, row.fault)
			defer s.SetFault(row.api, Fault{})
			s.ResetCalls()
			var err error
			op := row.api
			switch op {
			case "DescribeAvailabilityZones":
				_, err = ec2Client(s).DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
			case "AssumeRole":
				_, err = stsClient(s, testAccessKey).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleA), RoleSessionName: aws.String("x")})
			default:
				op = "DescribeAccessPoints"
				_, err = efsClient(s, 1).DescribeAccessPoints(ctx, &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)})
			}
			var apiErr smithy.APIError
			var respErr *smithyhttp.ResponseError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != row.wantCode || !errors.As(err, &respErr) ||
				respErr.HTTPStatusCode() != row.wantStatus {
				t.Fatalf("err = %v, want %s with HTTP %d", err, row.wantCode, row.wantStatus)
			}
			if s.Calls(op) != 1 {
				t.Errorf("Calls(%s) = %d, want 1 (faulted calls count)", op, s.Calls(op))
			}
		})
	}
	var throttled *types.ThrottlingException
	s.SetFault("CreateAccessPoint", Fault{ThrottleProbability: 1})
	_, err := efsClient(s, 1).CreateAccessPoint(ctx, createAPInput(fsID, "t", 1, "/a"))
	if !errors.As(err, &throttled) {
		t.Errorf("CreateAccessPoint throttled: err = %v, want *types.ThrottlingException", err)
	}
	if n := len(s.AccessPoints(fsID)); n != 0 {
		t.Errorf("a throttled CreateAccessPoint created %d access points", n)
	}
}

// TestFaultThrottleRate allows one call per second with a bucket of one: of three immediate calls, the first
// passes and the next two are throttled. The SDK's retryer then gets through after backing off.
func TestFaultThrottleRate(t *testing.T) {
	s := startServer(t, Options{})
	fsID := s.AddFileSystem(FileSystem{})
	s.SetFault("DescribeAccessPoints", Fault{ThrottleRate: 0.001})
	c := efsClient(s, 1)
	in := &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)}
	var results []string
	for range 3 {
		_, err := c.DescribeAccessPoints(t.Context(), in)
		var apiErr smithy.APIError
		switch {
		case err == nil:
			results = append(results, "ok")
		case errors.As(err, &apiErr):
			results = append(results, apiErr.ErrorCode())
		default:
			t.Fatalf("DescribeAccessPoints: %v", err)
		}
	}
	if want := "[ok ThrottlingException ThrottlingException]"; fmtSlice(results) != want {
		t.Errorf("results = %v, want %s", results, want)
	}
	if s.Calls("DescribeAccessPoints") != 3 {
		t.Errorf("Calls = %d, want 3", s.Calls("DescribeAccessPoints"))
	}
	s.SetFault("DescribeAccessPoints", Fault{})
	if _, err := c.DescribeAccessPoints(t.Context(), in); err != nil {
		t.Errorf("after clearing the fault: %v", err)
	}
}

func TestFaultLatency(t *testing.T) {
	s := startServer(t, Options{})
	fsID := s.AddFileSystem(FileSystem{})
	s.SetFault("DescribeAccessPoints", Fault{Latency: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := efsClient(s, 1).DescribeAccessPoints(ctx, &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the caller's deadline to expire during the injected latency", err)
	}
	if _, err := efsClient(s, 1).DescribeFileSystems(t.Context(), &efs.DescribeFileSystemsInput{}); err != nil {
		t.Errorf("another operation is not delayed, but: %v", err)
	}
}

func fmtSlice(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}
