package fakeaws

import (
	"encoding/json"
	"fmt"
	"os"
)

// Seed is initial content for a Server, as the standalone program reads it from --seed-file (JSON). Field names
// of file systems and access points are those of FileSystem and AccessPoint.
//
//	{
//	  "fileSystems": [{
//	    "FileSystemId": "fs-0123456789abcdef0", "AvailabilityZoneName": "us-east-1b",
//	    "mountTargets": [{"zone": "us-east-1b", "ip": "172.31.16.20"}],
//	    "accessPoints": [{"ClientToken": "t1", "PosixUser": {"Uid": 1000, "Gid": 1000},
//	                      "RootDirectory": {"Path": "/data"}}]
//	  }],
//	  "roles": [{"arn": "arn:aws:iam::210987654321:role/efs", "externalId": "cluster-1"}]
//	}
type Seed struct {
	FileSystems []SeedFileSystem `json:"fileSystems"`
	Roles       []SeedRole       `json:"roles"`
}

// SeedFileSystem is a file system with its mount targets and access points.
type SeedFileSystem struct {
	FileSystem
	MountTargets []SeedMountTarget `json:"mountTargets"`
	AccessPoints []AccessPoint     `json:"accessPoints"`
}

// SeedMountTarget places a mount target in a zone, at an address (empty: a free one).
type SeedMountTarget struct {
	Zone string `json:"zone"`
	IP   string `json:"ip"`
}

// SeedRole is a role STS lets callers assume (see AddRole).
type SeedRole struct {
	ARN        string `json:"arn"`
	ExternalID string `json:"externalId"`
}

// LoadSeed reads a Seed from a JSON file.
func LoadSeed(path string) (Seed, error) {
	var seed Seed
	b, err := os.ReadFile(path)
	if err != nil {
		return seed, fmt.Errorf("fakeaws: read seed file: %w", err)
	}
	if err := json.Unmarshal(b, &seed); err != nil {
		return seed, fmt.Errorf("fakeaws: seed file %s: %w", path, err)
	}
	return seed, nil
}

// ApplySeed adds the seed's file systems, mount targets, access points and roles, and returns the IDs of the
// file systems in seed order. It stops at the first entry the API would reject.
func (s *Server) ApplySeed(seed Seed) (ids []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	for _, fs := range seed.FileSystems {
		id := s.AddFileSystem(fs.FileSystem)
		ids = append(ids, id)
		for _, mt := range fs.MountTargets {
			s.AddMountTarget(id, mt.Zone, mt.IP)
		}
		for _, ap := range fs.AccessPoints {
			ap.FileSystemId = id
			s.AddAccessPoint(ap)
		}
	}
	for _, r := range seed.Roles {
		if !roleARNPattern.MatchString(r.ARN) {
			return ids, fmt.Errorf("fakeaws: seed role arn %q: want arn:aws:iam::<12-digit account>:role/<name>", r.ARN)
		}
		s.AddRole(r.ARN, r.ExternalID)
	}
	return ids, nil
}
