package provision

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
)

// ownerAccount is the file system owner's view in a cross-account setup. AZ names are per account: the owner's
// "us-east-1a" is physical zone use1-az3, while in the cluster's account (clusterZones) "us-east-1a" is use1-az1.
type ownerAccount struct {
	EFS
	mts []cloud.MountTarget
	fs  cloud.FileSystem
}

func (o ownerAccount) DescribeMountTargets(context.Context, string) ([]cloud.MountTarget, error) {
	return o.mts, nil
}

func (o ownerAccount) DescribeFileSystem(context.Context, string) (*cloud.FileSystem, error) {
	return &o.fs, nil
}

type clusterZones []cloud.Zone

func (z clusterZones) AvailabilityZones(context.Context) ([]cloud.Zone, error) { return z, nil }

var (
	cluster = clusterZones{{Name: "us-east-1a", ID: "use1-az1"}, {Name: "us-east-1b", ID: "use1-az2"}, {Name: "us-east-1c", ID: "use1-az3"}}
	owner   = ownerAccount{mts: []cloud.MountTarget{
		{AvailabilityZoneName: "us-east-1a", AvailabilityZoneID: "use1-az3", IPAddress: "10.0.3.1", State: "available"},
		{AvailabilityZoneName: "us-east-1b", AvailabilityZoneID: "use1-az1", IPAddress: "10.0.1.1", State: "available"},
		{AvailabilityZoneName: "us-east-1c", AvailabilityZoneID: "use1-az2", IPAddress: "10.0.2.1", State: "deleting"},
	}, fs: cloud.FileSystem{ID: "fs-0123abcd", AvailabilityZoneName: "us-east-1b", AvailabilityZoneID: "use1-az1"}}
)

func TestMountTargetChoiceIsKeyedByZoneID(t *testing.T) {
	p := New(Config{GIDs: gidalloc.New(0, nil)})
	acct := Account{Key: "arn:aws:iam::210987654321:role/efs", CrossAccount: true}
	// az=us-east-1a in the cluster's account is use1-az1: the owner's mount target there is 10.0.1.1, although the
	// owner calls that zone us-east-1b.
	ctx, err := p.mountContext(t.Context(), owner, cluster, CreateRequest{FileSystemID: "fs-0123abcd", Account: acct, Params: scparams.Params{AZ: "us-east-1a"}})
	if err != nil || ctx.MountTargetIP != "10.0.1.1" {
		t.Fatalf("az us-east-1a: %+v, %v; want 10.0.1.1", ctx, err)
	}
	// Without az: every available target, keyed by AZ ID and by the cluster account's zone name.
	ctx, err = p.mountContext(t.Context(), owner, cluster, CreateRequest{FileSystemID: "fs-0123abcd", Account: acct})
	want := map[string]string{"use1-az3": "10.0.3.1", "us-east-1c": "10.0.3.1", "use1-az1": "10.0.1.1", "us-east-1a": "10.0.1.1"}
	if err != nil || !maps.Equal(ctx.MountTargetIPs, want) {
		t.Fatalf("map %v, %v; want %v", ctx.MountTargetIPs, err, want)
	}
	// An az without an available target falls back to the first available one by zone ID, not at random.
	ctx, _ = p.mountContext(t.Context(), owner, cluster, CreateRequest{FileSystemID: "fs-0123abcd", Account: acct, Params: scparams.Params{AZ: "us-east-1b"}})
	if ctx.MountTargetIP != "10.0.3.1" {
		t.Fatalf("fallback %+v, want the first available target", ctx)
	}
	// One Zone across accounts: the owner's zone ID translated into the cluster's zone name.
	zone, err := p.oneZone(t.Context(), owner, cluster, CreateRequest{FileSystemID: "fs-0123abcd", Account: acct})
	if err != nil || zone != "us-east-1a" {
		t.Fatalf("One Zone = %q, %v; want us-east-1a (use1-az1 in the cluster's account)", zone, err)
	}
	// Cleanup mounts across accounts use the target in the controller's own zone ID.
	opts, err := CleanupMountOptions(t.Context(), owner, acct, "fs-0123abcd", "use1-az1")
	if err != nil || len(opts) != 3 || opts[2] != "mounttargetip=10.0.1.1" {
		t.Fatalf("cleanup options %v, %v", opts, err)
	}
	opts, _ = CleanupMountOptions(t.Context(), owner, Account{}, "fs-0123abcd", "use1-az1")
	if len(opts) != 2 {
		t.Fatalf("same-account cleanup options %v, want [tls iam]", opts)
	}
	none := ownerAccount{mts: owner.mts[2:]}
	if _, err := p.mountContext(t.Context(), none, cluster, CreateRequest{FileSystemID: "fs-0123abcd", Account: acct}); !errors.Is(err, ErrNoMountTarget) {
		t.Fatalf("no available target: %v, want ErrNoMountTarget", err)
	}
}
