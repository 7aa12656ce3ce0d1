package fakeaws

import (
	"time"
)

// The EFS resource types below mirror the EFS API (service/efs/types) field for field and spell fields the way
// the API does (FileSystemId, OwnerUid), so that their JSON encoding is the wire format.

// FileSystem is an EFS file system. A file system with AvailabilityZoneName set is a One Zone file system.
type FileSystem struct {
	FileSystemId   string
	FileSystemArn  string
	CreationToken  string
	Name           string // the value of the Name tag
	OwnerId        string
	LifeCycleState string // creating | available | ...; default "available" when seeded
	// AvailabilityZoneName and AvailabilityZoneId are set for One Zone file systems only (either one is
	// enough when seeding; the other is filled in from the server's zones).
	AvailabilityZoneName         string
	AvailabilityZoneId           string
	PerformanceMode              string // generalPurpose (default) | maxIO
	ThroughputMode               string // bursting (default) | provisioned | elastic
	ProvisionedThroughputInMibps float64
	Encrypted                    bool
	KmsKeyId                     string
	Tags                         []Tag
	CreationTime                 time.Time
	SizeInBytes                  int64
	NumberOfMountTargets         int
}

// MountTarget is an EFS mount target: one network interface of a file system in one zone.
type MountTarget struct {
	MountTargetId        string
	FileSystemId         string
	OwnerId              string
	SubnetId             string
	VpcId                string
	IpAddress            string
	NetworkInterfaceId   string
	AvailabilityZoneName string
	AvailabilityZoneId   string
	LifeCycleState       string
}

// AccessPoint is an EFS access point.
type AccessPoint struct {
	AccessPointId  string
	AccessPointArn string
	FileSystemId   string
	ClientToken    string
	Name           string // the value of the Name tag
	OwnerId        string
	LifeCycleState string
	PosixUser      *PosixUser
	RootDirectory  RootDirectory // Path "" means "/"
	Tags           []Tag
}

// PosixUser is the POSIX identity an access point enforces.
type PosixUser struct {
	Uid           int64
	Gid           int64
	SecondaryGids []int64 `json:",omitempty"`
}

// RootDirectory is the directory an access point exposes.
type RootDirectory struct {
	Path         string        `json:",omitempty"`
	CreationInfo *CreationInfo `json:",omitempty"`
}

// CreationInfo is how EFS creates an access point's root directory when it does not exist.
type CreationInfo struct {
	OwnerUid    int64
	OwnerGid    int64
	Permissions string
}

// Tag is a key-value pair on a file system or access point.
type Tag struct {
	Key   string
	Value string
}

// Subnet is the one subnet the fake has in each zone; mount targets get their addresses from it.
type Subnet struct {
	SubnetId, VpcId, AvailabilityZoneName, AvailabilityZoneId, CidrBlock string
}

// Wire shapes that differ from the public types.

type wireFileSystem struct {
	OwnerId                      string
	CreationToken                string
	FileSystemId                 string
	FileSystemArn                string
	CreationTime                 float64
	LifeCycleState               string
	Name                         string `json:",omitempty"`
	NumberOfMountTargets         int
	SizeInBytes                  wireSize
	PerformanceMode              string
	Encrypted                    bool
	KmsKeyId                     string  `json:",omitempty"`
	ThroughputMode               string  `json:",omitempty"`
	ProvisionedThroughputInMibps float64 `json:",omitempty"`
	AvailabilityZoneName         string  `json:",omitempty"`
	AvailabilityZoneId           string  `json:",omitempty"`
	Tags                         []Tag
	FileSystemProtection         map[string]string
}

type wireSize struct {
	Value           int64
	Timestamp       float64 `json:",omitempty"`
	ValueInIA       int64
	ValueInStandard int64
	ValueInArchive  int64
}

type wireAccessPoint struct {
	ClientToken    string
	Name           string `json:",omitempty"`
	Tags           []Tag
	AccessPointId  string
	AccessPointArn string
	FileSystemId   string
	PosixUser      *PosixUser `json:",omitempty"`
	RootDirectory  RootDirectory
	OwnerId        string
	LifeCycleState string
}

func epochSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}

func (f FileSystem) wire() wireFileSystem {
	tags := f.Tags
	if tags == nil {
		tags = []Tag{}
	}
	return wireFileSystem{
		OwnerId: f.OwnerId, CreationToken: f.CreationToken, FileSystemId: f.FileSystemId,
		FileSystemArn: f.FileSystemArn, CreationTime: epochSeconds(f.CreationTime),
		LifeCycleState: f.LifeCycleState, Name: f.Name, NumberOfMountTargets: f.NumberOfMountTargets,
		SizeInBytes:     wireSize{Value: f.SizeInBytes, ValueInStandard: f.SizeInBytes},
		PerformanceMode: f.PerformanceMode, Encrypted: f.Encrypted, KmsKeyId: f.KmsKeyId,
		ThroughputMode: f.ThroughputMode, ProvisionedThroughputInMibps: f.ProvisionedThroughputInMibps,
		AvailabilityZoneName: f.AvailabilityZoneName, AvailabilityZoneId: f.AvailabilityZoneId, Tags: tags,
		FileSystemProtection: map[string]string{"ReplicationOverwriteProtection": "ENABLED"},
	}
}

func (a AccessPoint) wire() wireAccessPoint {
	tags := a.Tags
	if tags == nil {
		tags = []Tag{}
	}
	rd := a.RootDirectory
	if rd.Path == "" {
		rd.Path = "/"
	}
	return wireAccessPoint{
		ClientToken: a.ClientToken, Name: a.Name, Tags: tags, AccessPointId: a.AccessPointId,
		AccessPointArn: a.AccessPointArn, FileSystemId: a.FileSystemId, PosixUser: a.PosixUser,
		RootDirectory: rd, OwnerId: a.OwnerId, LifeCycleState: a.LifeCycleState,
	}
}

// nameTag returns the value of the Name tag, as EFS reports it in the Name field.
func nameTag(tags []Tag) string {
	for _, t := range tags {
		if t.Key == "Name" {
			return t.Value
		}
	}
	return ""
}

// clone returns a deep copy of an access point, so callers never share slices with the server's state.
func (a AccessPoint) clone() AccessPoint {
	if a.PosixUser != nil {
		p := *a.PosixUser
		p.SecondaryGids = append([]int64(nil), p.SecondaryGids...)
		a.PosixUser = &p
	}
	if a.RootDirectory.CreationInfo != nil {
		c := *a.RootDirectory.CreationInfo
		a.RootDirectory.CreationInfo = &c
	}
	a.Tags = append([]Tag(nil), a.Tags...)
	return a
}
