package fakeaws

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/efs/types"
	"github.com/aws/smithy-go"
)

const (
	missingFS = "fs-00000000000000000"
	missingAP = "fsap-00000000000000000"
	missingMT = "fsmt-00000000000000000"
)

// callEFS runs the EFS operation whose input type is that of in.
func callEFS(t *testing.T, c *efs.Client, in any) error {
	t.Helper()
	ctx := t.Context()
	var err error
	switch in := in.(type) {
	case *efs.CreateAccessPointInput:
		_, err = c.CreateAccessPoint(ctx, in)
	case *efs.DescribeAccessPointsInput:
		_, err = c.DescribeAccessPoints(ctx, in)
	case *efs.DeleteAccessPointInput:
		_, err = c.DeleteAccessPoint(ctx, in)
	case *efs.CreateFileSystemInput:
		_, err = c.CreateFileSystem(ctx, in)
	case *efs.DescribeFileSystemsInput:
		_, err = c.DescribeFileSystems(ctx, in)
	case *efs.CreateMountTargetInput:
		_, err = c.CreateMountTarget(ctx, in)
	case *efs.DescribeMountTargetsInput:
		_, err = c.DescribeMountTargets(ctx, in)
	case *efs.TagResourceInput:
		_, err = c.TagResource(ctx, in)
	case *efs.UntagResourceInput:
		_, err = c.UntagResource(ctx, in)
	case *efs.ListTagsForResourceInput:
		_, err = c.ListTagsForResource(ctx, in)
	default:
		t.Fatalf("no EFS operation takes %T", in)
	}
	return err
}

// TestEFSErrorsDecode checks that every error the fake sends decodes to the SDK's typed error (or, for codes
// the operation does not model, to an API error with that code), with a message naming the problem.
func TestEFSErrorsDecode(t *testing.T) {
	s := startServer(t, Options{AccessPointQuota: 1, FileSystemCreateDelay: 1 << 40})
	fsID := s.AddFileSystem(FileSystem{CreationToken: "existing"})
	oneZone := s.AddFileSystem(FileSystem{AvailabilityZoneName: "us-east-1b"})
	creating := s.AddFileSystem(FileSystem{LifeCycleState: "creating"})
	s.AddMountTarget(fsID, "us-east-1a", "")
	apID := s.AddAccessPoint(AccessPoint{FileSystemId: fsID, ClientToken: "taken"})
	subnets := s.Subnets()
	rows := []struct {
		name     string
		input    any
		wantType any
		wantCode string
		wantMsg  string
	}{
		{"token taken", createAPInput(fsID, "taken", 1, "/a"), &types.AccessPointAlreadyExists{}, "AccessPointAlreadyExists", apID},
		{"quota", createAPInput(fsID, "new", 1, "/a"), &types.AccessPointLimitExceeded{}, "AccessPointLimitExceeded", "maximum of 1"},
		{"unknown file system", createAPInput(missingFS, "t", 1, "/a"), &types.FileSystemNotFound{}, "FileSystemNotFound", missingFS},
		{"file system creating", createAPInput(creating, "t", 1, "/a"), &types.IncorrectFileSystemLifeCycleState{}, "IncorrectFileSystemLifeCycleState", "creating"},
		{"bad file system ID", createAPInput("fs-xyz", "t", 1, "/a"), &types.BadRequest{}, "BadRequest", "FileSystemId"},
		{"path with ..", createAPInput(oneZone, "t", 1, "/a/../b"), &types.BadRequest{}, "BadRequest", "RootDirectory.Path"},
		{"path too deep", createAPInput(oneZone, "t", 1, "/a/b/c/d/e"), &types.BadRequest{}, "BadRequest", "more than 4"},
		{"path with $", createAPInput(oneZone, "t", 1, "/a$b"), &types.BadRequest{}, "BadRequest", "RootDirectory.Path"},
		{"path relative", createAPInput(oneZone, "t", 1, "a"), &types.BadRequest{}, "BadRequest", "must start with /"},
		{"gid too large", createAPInput(oneZone, "t", 4294967296, "/a"), &types.BadRequest{}, "BadRequest", "PosixUser"},
		{"describe both", &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID), AccessPointId: aws.String(apID)}, &types.BadRequest{}, "BadRequest", "mutually exclusive"},
		{"describe missing AP", &efs.DescribeAccessPointsInput{AccessPointId: aws.String(missingAP)}, &types.AccessPointNotFound{}, "AccessPointNotFound", missingAP},
		{"describe missing FS", &efs.DescribeAccessPointsInput{FileSystemId: aws.String(missingFS)}, &types.FileSystemNotFound{}, "FileSystemNotFound", missingFS},
		{"bad NextToken", &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID), NextToken: aws.String("garbage!")}, &types.BadRequest{}, "BadRequest", "NextToken"},
		{"NextToken of another FS", &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID), NextToken: aws.String(encodePageToken(oneZone, 1))}, &types.BadRequest{}, "BadRequest", "different listing"},
		{"MaxResults 0", &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID), MaxResults: aws.Int32(0)}, &types.BadRequest{}, "BadRequest", "MaxResults"},
		{"delete missing AP", &efs.DeleteAccessPointInput{AccessPointId: aws.String(missingAP)}, &types.AccessPointNotFound{}, "AccessPointNotFound", missingAP},
		{"creation token taken", &efs.CreateFileSystemInput{CreationToken: aws.String("existing")}, &types.FileSystemAlreadyExists{}, "FileSystemAlreadyExists", fsID},
		{"unknown zone", &efs.CreateFileSystemInput{CreationToken: aws.String("z"), AvailabilityZoneName: aws.String("us-east-1z")}, &types.UnsupportedAvailabilityZone{}, "UnsupportedAvailabilityZone", "us-east-1z"},
		{"describe FS missing", &efs.DescribeFileSystemsInput{FileSystemId: aws.String(missingFS)}, &types.FileSystemNotFound{}, "FileSystemNotFound", missingFS},
		{"second mount target in zone", &efs.CreateMountTargetInput{FileSystemId: aws.String(fsID), SubnetId: aws.String(subnets[0].SubnetId)}, &types.MountTargetConflict{}, "MountTargetConflict", "us-east-1a"},
		{"one zone other zone", &efs.CreateMountTargetInput{FileSystemId: aws.String(oneZone), SubnetId: aws.String(subnets[0].SubnetId)}, &types.AvailabilityZonesMismatch{}, "AvailabilityZonesMismatch", "us-east-1b"},
		{"unknown subnet", &efs.CreateMountTargetInput{FileSystemId: aws.String(fsID), SubnetId: aws.String("subnet-0123456789abcdef0")}, &types.SubnetNotFound{}, "SubnetNotFound", "subnet-0123456789abcdef0"},
		{"mount target on creating FS", &efs.CreateMountTargetInput{FileSystemId: aws.String(creating), SubnetId: aws.String(subnets[1].SubnetId)}, &types.IncorrectFileSystemLifeCycleState{}, "IncorrectFileSystemLifeCycleState", creating},
		{"describe MT missing", &efs.DescribeMountTargetsInput{MountTargetId: aws.String(missingMT)}, &types.MountTargetNotFound{}, "MountTargetNotFound", missingMT},
		{"describe MT by missing AP", &efs.DescribeMountTargetsInput{AccessPointId: aws.String(missingAP)}, &types.AccessPointNotFound{}, "AccessPointNotFound", missingAP},
		{"describe MT no filter", &efs.DescribeMountTargetsInput{}, &types.BadRequest{}, "BadRequest", "exactly one"},
		{"tag missing AP", &efs.TagResourceInput{ResourceId: aws.String(missingAP), Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}, &types.AccessPointNotFound{}, "AccessPointNotFound", missingAP},
		{"tag reserved key", &efs.TagResourceInput{ResourceId: aws.String(apID), Tags: []types.Tag{{Key: aws.String("aws:x"), Value: aws.String("v")}}}, &types.BadRequest{}, "BadRequest", "aws:"},
		{"untag missing FS", &efs.UntagResourceInput{ResourceId: aws.String(missingFS), TagKeys: []string{"k"}}, &types.FileSystemNotFound{}, "FileSystemNotFound", missingFS},
		{"list tags bad ID", &efs.ListTagsForResourceInput{ResourceId: aws.String("vol-1")}, &types.BadRequest{}, "BadRequest", "ResourceId"},
	}
	c := efsClient(s, 1)
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			err := callEFS(t, c, row.input)
			if err == nil {
				t.Fatal("no error")
			}
			target := reflect.New(reflect.TypeOf(row.wantType))
			if !errors.As(err, target.Interface()) {
				t.Errorf("err = %v (%T), want %T", err, errors.Unwrap(err), row.wantType)
			}
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != row.wantCode {
				t.Errorf("error code of %v, want %s", err, row.wantCode)
			}
			if apiErr != nil && !strings.Contains(apiErr.ErrorMessage(), row.wantMsg) {
				t.Errorf("message %q does not mention %q", apiErr.ErrorMessage(), row.wantMsg)
			}
		})
	}
}
