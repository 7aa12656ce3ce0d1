package cloud

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	efstypes "github.com/aws/aws-sdk-go-v2/service/efs/types"
)

// efsAPI lists the EFS calls the driver makes.
type efsAPI interface {
	CreateAccessPoint(ctx context.Context, in *efs.CreateAccessPointInput, optFns ...func(*efs.Options)) (*efs.CreateAccessPointOutput, error)
	DeleteAccessPoint(ctx context.Context, in *efs.DeleteAccessPointInput, optFns ...func(*efs.Options)) (*efs.DeleteAccessPointOutput, error)
	DescribeAccessPoints(ctx context.Context, in *efs.DescribeAccessPointsInput, optFns ...func(*efs.Options)) (*efs.DescribeAccessPointsOutput, error)
	DescribeFileSystems(ctx context.Context, in *efs.DescribeFileSystemsInput, optFns ...func(*efs.Options)) (*efs.DescribeFileSystemsOutput, error)
	DescribeMountTargets(ctx context.Context, in *efs.DescribeMountTargetsInput, optFns ...func(*efs.Options)) (*efs.DescribeMountTargetsOutput, error)
}

// ec2API lists the EC2 calls the driver makes (ec2query.go).
type ec2API interface {
	DescribeAvailabilityZones(ctx context.Context) ([]Zone, error)
}

var (
	_ efsAPI = (*efs.Client)(nil)
	_ ec2API = (*ec2Query)(nil)
)

// listPageSize is the DescribeAccessPoints page size when listing a file system (the EFS maximum).
const listPageSize = 1000

// Cloud is one AWS identity's view of EFS and EC2: the cluster's own, or an assumed cross-account role.
type Cloud struct {
	efs      efsAPI
	ec2      ec2API
	retryers *retryers
	// Key identifies the identity: "" for the driver's own credentials, else the role ARN.
	Key string
}

func (c *Cloud) efsOpt(op string) func(*efs.Options) {
	return func(o *efs.Options) { o.Retryer = c.retryers.get(op) }
}

// CreateAccessPoint creates an access point. An existing access point with the same client token and other
// parameters gives an *AlreadyExistsError.
func (c *Cloud) CreateAccessPoint(ctx context.Context, in CreateAccessPointInput) (*AccessPoint, error) {
	uid, gid := int64(in.UID), int64(in.GID)
	req := &efs.CreateAccessPointInput{
		ClientToken:  aws.String(in.ClientToken),
		FileSystemId: aws.String(in.FileSystemID),
		PosixUser:    &efstypes.PosixUser{Uid: &uid, Gid: &gid},
		RootDirectory: &efstypes.RootDirectory{
			Path: aws.String(in.RootDir),
			CreationInfo: &efstypes.CreationInfo{
				OwnerUid: &uid, OwnerGid: &gid, Permissions: aws.String(in.Permissions),
			},
		},
		Tags: toEFSTags(in.Tags),
	}
	out, err := c.efs.CreateAccessPoint(ctx, req, c.efsOpt("CreateAccessPoint"))
	if err != nil {
		return nil, classify("CreateAccessPoint", in.FileSystemID, err)
	}
	ap := fromDescription(efstypes.AccessPointDescription{
		AccessPointId: out.AccessPointId, ClientToken: out.ClientToken, FileSystemId: out.FileSystemId,
		PosixUser: out.PosixUser, RootDirectory: out.RootDirectory, Tags: out.Tags, LifeCycleState: out.LifeCycleState,
	})
	return &ap, nil
}

// DeleteAccessPoint deletes an access point; a missing one gives ErrAccessPointNotFound.
func (c *Cloud) DeleteAccessPoint(ctx context.Context, id string) error {
	_, err := c.efs.DeleteAccessPoint(ctx, &efs.DeleteAccessPointInput{AccessPointId: aws.String(id)}, c.efsOpt("DeleteAccessPoint"))
	return classify("DeleteAccessPoint", id, err)
}

// DescribeAccessPoint describes one access point.
func (c *Cloud) DescribeAccessPoint(ctx context.Context, id string) (*AccessPoint, error) {
	out, err := c.efs.DescribeAccessPoints(ctx, &efs.DescribeAccessPointsInput{AccessPointId: aws.String(id)}, c.efsOpt("DescribeAccessPoints"))
	if err != nil {
		return nil, classify("DescribeAccessPoints", id, err)
	}
	if len(out.AccessPoints) != 1 {
		return nil, fmt.Errorf("DescribeAccessPoints %s: %w: got %d access points", id, ErrAccessPointNotFound, len(out.AccessPoints))
	}
	ap := fromDescription(out.AccessPoints[0])
	return &ap, nil
}

// ListAccessPoints lists every access point of a file system, following NextToken.
func (c *Cloud) ListAccessPoints(ctx context.Context, fileSystemID string) ([]AccessPoint, error) {
	var aps []AccessPoint
	token := ""
	for {
		page, next, err := c.ListAccessPointsPage(ctx, fileSystemID, token)
		if err != nil {
			return nil, err
		}
		aps = append(aps, page...)
		if next == "" {
			return aps, nil
		}
		token = next
	}
}

// ListAccessPointsPage returns one page (up to 1,000) of a file system's access points: token "" for the first,
// and the token of the next page, "" after the last.
func (c *Cloud) ListAccessPointsPage(ctx context.Context, fileSystemID, token string) ([]AccessPoint, string, error) {
	in := &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fileSystemID), MaxResults: aws.Int32(listPageSize)}
	if token != "" {
		in.NextToken = aws.String(token)
	}
	out, err := c.efs.DescribeAccessPoints(ctx, in, c.efsOpt("DescribeAccessPoints"))
	if err != nil {
		return nil, "", classify("DescribeAccessPoints", fileSystemID, err)
	}
	aps := make([]AccessPoint, 0, len(out.AccessPoints))
	for _, d := range out.AccessPoints {
		aps = append(aps, fromDescription(d))
	}
	return aps, aws.ToString(out.NextToken), nil
}

// DescribeFileSystem describes one file system.
func (c *Cloud) DescribeFileSystem(ctx context.Context, id string) (*FileSystem, error) {
	out, err := c.efs.DescribeFileSystems(ctx, &efs.DescribeFileSystemsInput{FileSystemId: aws.String(id)}, c.efsOpt("DescribeFileSystems"))
	if err != nil {
		return nil, classify("DescribeFileSystems", id, err)
	}
	if len(out.FileSystems) != 1 {
		return nil, fmt.Errorf("DescribeFileSystems %s: %w: got %d file systems", id, ErrFileSystemNotFound, len(out.FileSystems))
	}
	d := out.FileSystems[0]
	return &FileSystem{ID: aws.ToString(d.FileSystemId), AvailabilityZoneName: aws.ToString(d.AvailabilityZoneName),
		AvailabilityZoneID: aws.ToString(d.AvailabilityZoneId)}, nil
}

// DescribeMountTargets lists the mount targets of a file system, sorted by AZ ID.
func (c *Cloud) DescribeMountTargets(ctx context.Context, fileSystemID string) ([]MountTarget, error) {
	var mts []MountTarget
	in := &efs.DescribeMountTargetsInput{FileSystemId: aws.String(fileSystemID)}
	for {
		out, err := c.efs.DescribeMountTargets(ctx, in, c.efsOpt("DescribeMountTargets"))
		if err != nil {
			return nil, classify("DescribeMountTargets", fileSystemID, err)
		}
		for _, d := range out.MountTargets {
			mts = append(mts, MountTarget{ID: aws.ToString(d.MountTargetId), FileSystemID: aws.ToString(d.FileSystemId),
				AvailabilityZoneName: aws.ToString(d.AvailabilityZoneName), AvailabilityZoneID: aws.ToString(d.AvailabilityZoneId),
				IPAddress: aws.ToString(d.IpAddress), State: string(d.LifeCycleState)})
		}
		if out.NextMarker == nil || *out.NextMarker == "" {
			break
		}
		in.Marker = out.NextMarker
	}
	sort.Slice(mts, func(i, j int) bool { return mts[i].AvailabilityZoneID < mts[j].AvailabilityZoneID })
	return mts, nil
}

// AvailabilityZones lists the calling account's zones in its region, name and ID.
func (c *Cloud) AvailabilityZones(ctx context.Context) ([]Zone, error) {
	zones, err := c.ec2.DescribeAvailabilityZones(ctx)
	if err != nil {
		return nil, classify("DescribeAvailabilityZones", "", err)
	}
	return zones, nil
}

func fromDescription(d efstypes.AccessPointDescription) AccessPoint {
	ap := AccessPoint{ID: aws.ToString(d.AccessPointId), FileSystemID: aws.ToString(d.FileSystemId),
		ClientToken: aws.ToString(d.ClientToken), RootDir: "/", State: string(d.LifeCycleState), Tags: map[string]string{}}
	if d.RootDirectory != nil && aws.ToString(d.RootDirectory.Path) != "" {
		ap.RootDir = aws.ToString(d.RootDirectory.Path)
	}
	if d.RootDirectory != nil && d.RootDirectory.CreationInfo != nil {
		ci := d.RootDirectory.CreationInfo
		ap.HasCreationInfo, ap.Permissions = true, aws.ToString(ci.Permissions)
		ap.OwnerUID, ap.OwnerGID = uint32(aws.ToInt64(ci.OwnerUid)), uint32(aws.ToInt64(ci.OwnerGid))
	}
	if d.PosixUser != nil && d.PosixUser.Uid != nil && d.PosixUser.Gid != nil {
		ap.HasPosixUser, ap.UID, ap.GID = true, uint32(*d.PosixUser.Uid), uint32(*d.PosixUser.Gid)
	}
	for _, t := range d.Tags {
		ap.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return ap
}

func toEFSTags(tags map[string]string) []efstypes.Tag {
	if len(tags) == 0 {
		return nil
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]efstypes.Tag, 0, len(tags))
	for _, k := range keys {
		out = append(out, efstypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}
