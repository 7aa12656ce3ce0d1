package main

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Ready is the document efs-standin writes to --ready-file once everything serves. The cluster suite reads it;
// field names are a contract (driver/test/standins/README.md).
type Ready struct {
	// PID is the program's process ID: send it SIGTERM to stop everything.
	PID int `json:"pid"`
	// Region is the region of every endpoint and DNS name.
	Region string `json:"region"`
	// AWSEndpoint is fakeaws over HTTPS (https://127.0.0.1:PORT), one endpoint for EFS, EC2 and STS: the URL of
	// every Infrastructure serviceEndpoint (elasticfilesystem, ec2, sts).
	AWSEndpoint string `json:"awsEndpoint"`
	// ControlURL is the control endpoint (http://127.0.0.1:PORT): GET /calls, POST /calls/reset, GET /mounts, POST /faults.
	ControlURL string `json:"controlURL"`
	// CAFile is the test CA (PEM) that signed fakeaws' and the mount targets' certificates: the cluster's trusted
	// CA bundle and efs-utils' stunnel CA.
	CAFile string `json:"caFile"`
	// NFSServer is where the real NFS server behind the mount targets serves the backing store (127.0.0.1:PORT),
	// "" with --nfs-server=none.
	NFSServer string `json:"nfsServer,omitempty"`
	// BackingDir holds one directory per file system (BackingDir/<id> is its root).
	BackingDir string `json:"backingDir"`
	// RegionalFileSystemID and OneZoneFileSystemID are the two seeded file systems.
	RegionalFileSystemID string `json:"regionalFileSystemID"`
	OneZoneFileSystemID  string `json:"oneZoneFileSystemID"`
	// FileSystems describe both.
	FileSystems []ReadyFileSystem `json:"fileSystems"`
}

// ReadyFileSystem is one seeded file system.
type ReadyFileSystem struct {
	ID string `json:"id"`
	// AvailabilityZone is the zone of a One Zone file system, "" for a regional one.
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// BackingDir is the file system's root on the host.
	BackingDir   string             `json:"backingDir"`
	MountTargets []ReadyMountTarget `json:"mountTargets"`
}

// ReadyMountTarget is one mount target: a zone and the loopback address where its TLS server listens on 2049.
type ReadyMountTarget struct {
	Zone string `json:"zone"`
	IP   string `json:"ip"`
}

// writeReady writes r to path atomically (a reader never sees half a document).
func writeReady(path string, r Ready) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
