package provision

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrNoMountTarget is wrapped when a cross-account file system has no usable mount target.
var ErrNoMountTarget = errors.New("no usable mount target")

// oneZone returns the zone name, in the cluster's account, of a One Zone file system ("" for a regional one).
// Across accounts zone names differ, so the file system's zone ID is translated through the cluster's zones.
func (p *Provisioner) oneZone(ctx context.Context, c EFS, own Zones, req CreateRequest) (string, error) {
	fs, err := p.fileSystem(ctx, c, req)
	if err != nil {
		return "", err
	}
	if fs.AvailabilityZoneName == "" && fs.AvailabilityZoneID == "" {
		return "", nil
	}
	if !req.Account.CrossAccount || fs.AvailabilityZoneID == "" {
		return fs.AvailabilityZoneName, nil
	}
	zones, err := p.ownZones(ctx, own)
	if err != nil {
		return "", err
	}
	for _, z := range zones {
		if z.ID == fs.AvailabilityZoneID {
			return z.Name, nil
		}
	}
	return "", fmt.Errorf("%w: One Zone file system %s is in zone ID %s, which the cluster's account does not have", ErrNoMountTarget, fs.ID, fs.AvailabilityZoneID)
}

func (p *Provisioner) fileSystem(ctx context.Context, c EFS, req CreateRequest) (cloud.FileSystem, error) {
	key := gidKey(req)
	p.mu.Lock()
	fs, ok := p.fs[key]
	p.mu.Unlock()
	if ok {
		return fs, nil
	}
	got, err := c.DescribeFileSystem(ctx, req.FileSystemID)
	if err != nil {
		return cloud.FileSystem{}, err
	}
	p.mu.Lock()
	p.fs[key] = *got
	p.mu.Unlock()
	return *got, nil
}

func (p *Provisioner) ownZones(ctx context.Context, own Zones) ([]cloud.Zone, error) {
	p.mu.Lock()
	zones := p.zones
	p.mu.Unlock()
	if zones != nil {
		return zones, nil
	}
	zones, err := own.AvailabilityZones(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.zones = zones
	p.mu.Unlock()
	return zones, nil
}

// mountContext works out the volume context that tells the node how to reach a cross-account file system.
// Mount targets are matched by AZ ID, which names the same physical zone in every account; the map written for
// the node carries both the cluster account's zone name (what upstream nodes look up) and the zone ID.
func (p *Provisioner) mountContext(ctx context.Context, c EFS, own Zones, req CreateRequest) (volume.Context, error) {
	if !req.Account.CrossAccount {
		return volume.Context{}, nil
	}
	if req.Account.DNSByAZID {
		return volume.Context{CrossAccount: true}, nil
	}
	mts, err := c.DescribeMountTargets(ctx, req.FileSystemID)
	if err != nil {
		return volume.Context{}, err
	}
	zones, err := p.ownZones(ctx, own)
	if err != nil {
		return volume.Context{}, err
	}
	nameByID := map[string]string{}
	idByName := map[string]string{}
	for _, z := range zones {
		nameByID[z.ID], idByName[z.Name] = z.Name, z.ID
	}
	var usable []cloud.MountTarget
	for _, mt := range mts {
		if mt.State == "available" && mt.IPAddress != "" {
			usable = append(usable, mt)
		}
	}
	if len(usable) == 0 {
		return volume.Context{}, fmt.Errorf("%w: file system %s has no available mount target", ErrNoMountTarget, req.FileSystemID)
	}
	if az := req.Params.AZ; az != "" {
		if err := scparams.CheckAZ(az); err != nil {
			return volume.Context{}, err
		}
		azID := idByName[az]
		if scparams.IsZoneID(az) {
			azID = az // az may name the zone by ID, which is the same in every account
		}
		ip, inZone, _ := volume.PickMountTarget(choices(usable), azID)
		if !inZone {
			klog.InfoS("No mount target in the zone of the az parameter; using another zone's", "az", az, "azID", azID,
				"fileSystemID", req.FileSystemID, "mountTargetZoneID", usable[0].AvailabilityZoneID)
		}
		return volume.Context{MountTargetIP: ip}, nil
	}
	ips := map[string]string{}
	for _, mt := range usable {
		ips[mt.AvailabilityZoneID] = mt.IPAddress
		if name := nameByID[mt.AvailabilityZoneID]; name != "" {
			ips[name] = mt.IPAddress
		}
	}
	return volume.Context{MountTargetIPs: ips}, nil
}

// choices lists mount targets for volume.PickMountTarget, each known by its zone ID (the same in every account).
func choices(mts []cloud.MountTarget) []volume.MountTargetChoice {
	out := make([]volume.MountTargetChoice, len(mts))
	for i, mt := range mts {
		out[i] = volume.MountTargetChoice{Zones: []string{mt.AvailabilityZoneID}, IP: mt.IPAddress}
	}
	return out
}

// CleanupMountOptions are the efs mount options the controller uses to mount a file system root for
// --delete-access-point-root-dir: tls and iam, plus, across accounts, crossaccount (secret crossaccount=true) or
// the IP of the mount target in the controller's own zone, matched by zone ID (else the first available one).
func CleanupMountOptions(ctx context.Context, c EFS, acct Account, fileSystemID, zoneID string) ([]string, error) {
	opts := []string{"tls", "iam"}
	switch {
	case !acct.CrossAccount:
		return opts, nil
	case acct.DNSByAZID:
		return append(opts, "crossaccount"), nil
	}
	mts, err := c.DescribeMountTargets(ctx, fileSystemID)
	if err != nil {
		return nil, err
	}
	var usable []cloud.MountTarget
	for _, mt := range mts {
		if mt.State == "available" && mt.IPAddress != "" {
			usable = append(usable, mt)
		}
	}
	ip, _, ok := volume.PickMountTarget(choices(usable), zoneID)
	if !ok {
		return nil, fmt.Errorf("%w: file system %s has no available mount target", ErrNoMountTarget, fileSystemID)
	}
	return append(opts, "mounttargetip="+ip), nil
}
