package fakeaws

import (
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/efs/types"
)

var (
	apIDRe  = regexp.MustCompile(`^fsap-[0-9a-f]{17}$`)
	apARNRe = regexp.MustCompile(`^arn:aws:elasticfilesystem:us-east-1:123456789012:access-point/fsap-[0-9a-f]{17}$`)
)

func createAPInput(fsID, token string, gid int64, path string) *efs.CreateAccessPointInput {
	return &efs.CreateAccessPointInput{
		FileSystemId: aws.String(fsID), ClientToken: aws.String(token),
		PosixUser: &types.PosixUser{Uid: aws.Int64(gid), Gid: aws.Int64(gid)},
		RootDirectory: &types.RootDirectory{Path: aws.String(path), CreationInfo: &types.CreationInfo{
			OwnerUid: aws.Int64(gid), OwnerGid: aws.Int64(gid), Permissions: aws.String("0700"),
		}},
		Tags: []types.Tag{{Key: aws.String("Name"), Value: aws.String("vol-" + token)}},
	}
}

func TestCreateAccessPointRoundTrip(t *testing.T) {
	s := startServer(t, Options{})
	fsID := s.AddFileSystem(FileSystem{})
	c := efsClient(s, 1)
	out, err := c.CreateAccessPoint(t.Context(), createAPInput(fsID, "pvc-1", 50000, "/dyn/pvc-1"))
	if err != nil {
		t.Fatalf("CreateAccessPoint: %v", err)
	}
	if !apIDRe.MatchString(aws.ToString(out.AccessPointId)) || !apARNRe.MatchString(aws.ToString(out.AccessPointArn)) {
		t.Errorf("ID %q / ARN %q not in the EFS formats", aws.ToString(out.AccessPointId), aws.ToString(out.AccessPointArn))
	}
	if out.LifeCycleState != types.LifeCycleStateCreating || aws.ToString(out.Name) != "vol-pvc-1" ||
		aws.ToString(out.OwnerId) != "123456789012" || aws.ToString(out.ClientToken) != "pvc-1" {
		t.Errorf("create output = %+v", out)
	}
	desc, err := c.DescribeAccessPoints(t.Context(), &efs.DescribeAccessPointsInput{AccessPointId: out.AccessPointArn})
	if err != nil {
		t.Fatalf("DescribeAccessPoints by ARN: %v", err)
	}
	if len(desc.AccessPoints) != 1 {
		t.Fatalf("DescribeAccessPoints returned %d access points, want 1", len(desc.AccessPoints))
	}
	got := desc.AccessPoints[0]
	if got.LifeCycleState != types.LifeCycleStateAvailable || aws.ToString(got.RootDirectory.Path) != "/dyn/pvc-1" ||
		aws.ToInt64(got.PosixUser.Gid) != 50000 || aws.ToString(got.RootDirectory.CreationInfo.Permissions) != "0700" {
		t.Errorf("described access point = %+v", got)
	}
	seeded := s.AccessPoints(fsID)
	if len(seeded) != 1 || seeded[0].PosixUser.Gid != 50000 || seeded[0].RootDirectory.Path != "/dyn/pvc-1" {
		t.Errorf("AccessPoints(%s) = %+v", fsID, seeded)
	}
	if _, err := c.DeleteAccessPoint(t.Context(), &efs.DeleteAccessPointInput{AccessPointId: out.AccessPointId}); err != nil {
		t.Fatalf("DeleteAccessPoint: %v", err)
	}
	if n := len(s.AccessPoints(fsID)); n != 0 {
		t.Errorf("%d access points left after delete, want 0", n)
	}
}

func TestCreateAccessPointClientToken(t *testing.T) {
	s := startServer(t, Options{})
	fs1, fs2 := s.AddFileSystem(FileSystem{}), s.AddFileSystem(FileSystem{})
	c := efsClient(s, 1)
	first, err := c.CreateAccessPoint(t.Context(), createAPInput(fs1, "tok", 1000, "/a"))
	if err != nil {
		t.Fatalf("CreateAccessPoint: %v", err)
	}
	rows := []struct {
		name  string
		input *efs.CreateAccessPointInput
	}{
		{"same parameters", createAPInput(fs1, "tok", 1000, "/a")},
		{"different parameters", createAPInput(fs1, "tok", 2000, "/b")},
		{"other file system", createAPInput(fs2, "tok", 1000, "/a")},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			_, err := c.CreateAccessPoint(t.Context(), row.input)
			var exists *types.AccessPointAlreadyExists
			if !errors.As(err, &exists) {
				t.Fatalf("err = %v, want AccessPointAlreadyExists", err)
			}
			if aws.ToString(exists.AccessPointId) != aws.ToString(first.AccessPointId) {
				t.Errorf("AccessPointId = %q, want %q", aws.ToString(exists.AccessPointId), aws.ToString(first.AccessPointId))
			}
		})
	}
	if n := len(s.AccessPoints(fs1)) + len(s.AccessPoints(fs2)); n != 1 {
		t.Errorf("%d access points exist, want 1", n)
	}
	s.DeleteAccessPointDirect(aws.ToString(first.AccessPointId))
	if _, err := c.CreateAccessPoint(t.Context(), createAPInput(fs2, "tok", 1000, "/a")); err != nil {
		t.Errorf("CreateAccessPoint with the token of a deleted access point: %v", err)
	}
}

func TestCreateAccessPointQuota(t *testing.T) {
	s := startServer(t, Options{AccessPointQuota: 3})
	fsID := s.AddFileSystem(FileSystem{})
	other := s.AddFileSystem(FileSystem{})
	c := efsClient(s, 1)
	for i := range 3 {
		if _, err := c.CreateAccessPoint(t.Context(), createAPInput(fsID, fmt.Sprint("t", i), 1000, "/x")); err != nil {
			t.Fatalf("CreateAccessPoint %d: %v", i, err)
		}
	}
	_, err := c.CreateAccessPoint(t.Context(), createAPInput(fsID, "t3", 1000, "/x"))
	var limit *types.AccessPointLimitExceeded
	if !errors.As(err, &limit) {
		t.Fatalf("4th CreateAccessPoint: err = %v, want AccessPointLimitExceeded", err)
	}
	if _, err := c.CreateAccessPoint(t.Context(), createAPInput(other, "t4", 1000, "/x")); err != nil {
		t.Errorf("the quota is per file system, but another file system got: %v", err)
	}
}

func TestDescribeAccessPointsPagination(t *testing.T) {
	s := startServer(t, Options{})
	fsID := s.AddFileSystem(FileSystem{})
	otherFS := s.AddFileSystem(FileSystem{})
	want := map[string]bool{}
	for i := range 250 {
		want[s.AddAccessPoint(AccessPoint{FileSystemId: fsID, PosixUser: &PosixUser{Uid: 1, Gid: int64(i)}})] = true
		s.AddAccessPoint(AccessPoint{FileSystemId: otherFS})
	}
	c := efsClient(s, 1)
	s.ResetCalls()
	got := map[string]bool{}
	pages := efs.NewDescribeAccessPointsPaginator(c, &efs.DescribeAccessPointsInput{
		FileSystemId: aws.String(fsID), MaxResults: aws.Int32(100)})
	sizes := []int{}
	for pages.HasMorePages() {
		out, err := pages.NextPage(t.Context())
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		sizes = append(sizes, len(out.AccessPoints))
		for _, ap := range out.AccessPoints {
			id := aws.ToString(ap.AccessPointId)
			if got[id] {
				t.Errorf("access point %s returned twice", id)
			}
			if aws.ToString(ap.FileSystemId) != fsID {
				t.Errorf("access point %s of file system %s listed", id, aws.ToString(ap.FileSystemId))
			}
			got[id] = true
		}
	}
	if fmt.Sprint(sizes) != "[100 100 50]" || len(got) != len(want) {
		t.Errorf("page sizes %v, %d distinct access points; want [100 100 50] and %d", sizes, len(got), len(want))
	}
	for id := range want {
		if !got[id] {
			t.Errorf("access point %s missing from the listing", id)
		}
	}
	if n := s.Calls("DescribeAccessPoints"); n != 3 {
		t.Errorf("Calls(DescribeAccessPoints) = %d, want 3", n)
	}
}

// TestDescribeAccessPointsPaginationUnderChange deletes and adds access points between pages: every access point
// that lives through the whole listing is returned exactly once.
func TestDescribeAccessPointsPaginationUnderChange(t *testing.T) {
	s := startServer(t, Options{})
	fsID := s.AddFileSystem(FileSystem{})
	var ids []string
	for range 30 {
		ids = append(ids, s.AddAccessPoint(AccessPoint{FileSystemId: fsID}))
	}
	c := efsClient(s, 1)
	in := &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID), MaxResults: aws.Int32(10)}
	page1, err := c.DescribeAccessPoints(t.Context(), in)
	if err != nil {
		t.Fatalf("page 1: %v", err)
	}
	s.DeleteAccessPointDirect(ids[5])  // already returned
	s.DeleteAccessPointDirect(ids[9])  // the last one returned: the token must not depend on it
	s.DeleteAccessPointDirect(ids[15]) // not yet returned
	added := s.AddAccessPoint(AccessPoint{FileSystemId: fsID})
	seen := map[string]int{}
	for _, ap := range page1.AccessPoints {
		seen[aws.ToString(ap.AccessPointId)]++
	}
	for next := page1.NextToken; next != nil; {
		in.NextToken = next
		out, err := c.DescribeAccessPoints(t.Context(), in)
		if err != nil {
			t.Fatalf("next page: %v", err)
		}
		for _, ap := range out.AccessPoints {
			seen[aws.ToString(ap.AccessPointId)]++
		}
		next = out.NextToken
	}
	for i, id := range ids {
		if i == 15 {
			if seen[id] != 0 {
				t.Errorf("deleted access point %s returned", id)
			}
			continue
		}
		if seen[id] != 1 {
			t.Errorf("access point %d (%s) returned %d times, want once", i, id, seen[id])
		}
	}
	if seen[added] != 1 {
		t.Errorf("access point added during the listing returned %d times, want once", seen[added])
	}
}
