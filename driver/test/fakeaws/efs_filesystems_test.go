package fakeaws

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/efs/types"
)

var (
	fsIDRe = regexp.MustCompile(`^fs-[0-9a-f]{17}$`)
	mtIDRe = regexp.MustCompile(`^fsmt-[0-9a-f]{17}$`)
)

func TestFileSystemsAndMountTargets(t *testing.T) {
	s := startServer(t, Options{})
	c := efsClient(s, 1)
	ctx := t.Context()
	out, err := c.CreateFileSystem(ctx, &efs.CreateFileSystemInput{
		CreationToken: aws.String("one-zone"), AvailabilityZoneName: aws.String("us-east-1b"),
		Tags: []types.Tag{{Key: aws.String("Name"), Value: aws.String("data")}},
	})
	if err != nil {
		t.Fatalf("CreateFileSystem: %v", err)
	}
	fsID := aws.ToString(out.FileSystemId)
	if !fsIDRe.MatchString(fsID) || out.LifeCycleState != types.LifeCycleStateCreating ||
		aws.ToString(out.AvailabilityZoneId) != "use1-az2" || aws.ToString(out.Name) != "data" ||
		out.CreationTime == nil || out.SizeInBytes == nil || out.PerformanceMode != types.PerformanceModeGeneralPurpose {
		t.Errorf("CreateFileSystem output = %+v", out)
	}
	desc, err := c.DescribeFileSystems(ctx, &efs.DescribeFileSystemsInput{CreationToken: aws.String("one-zone")})
	if err != nil || len(desc.FileSystems) != 1 {
		t.Fatalf("DescribeFileSystems by token: %v, %+v", err, desc)
	}
	got := desc.FileSystems[0]
	if aws.ToString(got.FileSystemId) != fsID || got.LifeCycleState != types.LifeCycleStateAvailable ||
		aws.ToString(got.AvailabilityZoneName) != "us-east-1b" {
		t.Errorf("described file system = %+v", got)
	}
	sub := s.Subnets()[1]
	mt, err := c.CreateMountTarget(ctx, &efs.CreateMountTargetInput{FileSystemId: aws.String(fsID), SubnetId: aws.String(sub.SubnetId)})
	if err != nil {
		t.Fatalf("CreateMountTarget: %v", err)
	}
	if !mtIDRe.MatchString(aws.ToString(mt.MountTargetId)) || aws.ToString(mt.AvailabilityZoneId) != "use1-az2" ||
		aws.ToString(mt.IpAddress) != "172.31.16.4" || aws.ToString(mt.VpcId) != sub.VpcId {
		t.Errorf("CreateMountTarget output = %+v", mt)
	}
	ap := s.AddAccessPoint(AccessPoint{FileSystemId: fsID})
	for _, in := range []*efs.DescribeMountTargetsInput{
		{FileSystemId: aws.String(fsID)}, {MountTargetId: mt.MountTargetId}, {AccessPointId: aws.String(ap)},
	} {
		mts, err := c.DescribeMountTargets(ctx, in)
		if err != nil || len(mts.MountTargets) != 1 || aws.ToString(mts.MountTargets[0].MountTargetId) != aws.ToString(mt.MountTargetId) ||
			mts.MountTargets[0].LifeCycleState != types.LifeCycleStateAvailable {
			t.Errorf("DescribeMountTargets(%+v) = %+v, %v", in, mts, err)
		}
	}
	fs, err := c.DescribeFileSystems(ctx, &efs.DescribeFileSystemsInput{FileSystemId: aws.String(fsID)})
	if err != nil || fs.FileSystems[0].NumberOfMountTargets != 1 {
		t.Errorf("NumberOfMountTargets after CreateMountTarget: %+v, %v", fs, err)
	}
}

func TestDescribeFileSystemsPagination(t *testing.T) {
	s := startServer(t, Options{})
	for i := range 7 {
		s.AddFileSystem(FileSystem{CreationToken: fmt.Sprint("t", i)})
	}
	c := efsClient(s, 1)
	pages := efs.NewDescribeFileSystemsPaginator(c, &efs.DescribeFileSystemsInput{MaxItems: aws.Int32(3)})
	seen := map[string]bool{}
	n := 0
	for pages.HasMorePages() {
		out, err := pages.NextPage(t.Context())
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		n++
		for _, f := range out.FileSystems {
			seen[aws.ToString(f.FileSystemId)] = true
		}
	}
	if n != 3 || len(seen) != 7 {
		t.Errorf("%d pages, %d file systems; want 3 and 7", n, len(seen))
	}
}

func TestTags(t *testing.T) {
	s := startServer(t, Options{})
	fsID := s.AddFileSystem(FileSystem{})
	apID := s.AddAccessPoint(AccessPoint{FileSystemId: fsID, Tags: []Tag{{"a", "1"}}})
	c := efsClient(s, 1)
	ctx := t.Context()
	for _, id := range []string{apID, s.arn("access-point/" + apID), fsID} {
		if _, err := c.TagResource(ctx, &efs.TagResourceInput{ResourceId: aws.String(id), Tags: []types.Tag{
			{Key: aws.String("Name"), Value: aws.String("n")}, {Key: aws.String("b"), Value: aws.String("2")}}}); err != nil {
			t.Fatalf("TagResource(%s): %v", id, err)
		}
	}
	if _, err := c.UntagResource(ctx, &efs.UntagResourceInput{ResourceId: aws.String(apID), TagKeys: []string{"a"}}); err != nil {
		t.Fatalf("UntagResource: %v", err)
	}
	out, err := c.ListTagsForResource(ctx, &efs.ListTagsForResourceInput{ResourceId: aws.String(apID), MaxResults: aws.Int32(1)})
	if err != nil || len(out.Tags) != 1 || out.NextToken == nil {
		t.Fatalf("ListTagsForResource page 1 = %+v, %v", out, err)
	}
	out2, err := c.ListTagsForResource(ctx, &efs.ListTagsForResourceInput{ResourceId: aws.String(apID), NextToken: out.NextToken})
	if err != nil || len(out2.Tags) != 1 || out2.NextToken != nil {
		t.Fatalf("ListTagsForResource page 2 = %+v, %v", out2, err)
	}
	got := aws.ToString(out.Tags[0].Key) + "=" + aws.ToString(out.Tags[0].Value) + "," +
		aws.ToString(out2.Tags[0].Key) + "=" + aws.ToString(out2.Tags[0].Value)
	if got != "Name=n,b=2" {
		t.Errorf("tags = %s, want Name=n,b=2", got)
	}
	if ap, _ := s.AccessPoint(apID); ap.Name != "n" {
		t.Errorf("Name after tagging = %q, want n", ap.Name)
	}
}
