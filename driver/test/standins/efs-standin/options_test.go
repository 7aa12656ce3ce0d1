package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
	"github.com/openshift/aws-efs-csi/driver/test/nfsbackend"
)

func TestValidate(t *testing.T) {
	rows := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"defaults", Options{Dir: "/tmp/x"}, ""},
		{"latency and fault", Options{Dir: "/tmp/x", Latency: 20 * time.Millisecond, Faults: []string{"CreateAccessPoint:throttle-probability=0.1"}}, ""},
		{"no dir", Options{}, "--dir"},
		{"relative dir", Options{Dir: "x"}, "--dir"},
		{"relative ready file", Options{Dir: "/tmp/x", ReadyFile: "ready.json"}, "--ready-file"},
		{"negative latency", Options{Dir: "/tmp/x", Latency: -time.Millisecond}, "--aws-latency"},
		{"bad fault", Options{Dir: "/tmp/x", Faults: []string{"latency"}}, "--fault"},
		{"no NFS server", Options{Dir: "/tmp/x", NFSServer: "none"}, ""},
		{"unknown NFS server", Options{Dir: "/tmp/x", NFSServer: "knfsd"}, "--nfs-server"},
		{"init-ca needs ca-dir", Options{InitCA: true}, "--ca-dir"},
		{"role", Options{Dir: "/tmp/x", Roles: []string{"arn:aws:iam::123456789012:role/efs", "arn:aws:iam::1:role/x,external-id=e"}}, ""},
		{"bad role", Options{Dir: "/tmp/x", Roles: []string{"efs"}}, "--role"},
		{"empty external id", Options{Dir: "/tmp/x", Roles: []string{"arn:aws:iam::1:role/x,external-id="}}, "--role"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			o := row.o
			err := o.Validate()
			if row.wantErr == "" && err != nil || row.wantErr != "" && (err == nil || !strings.Contains(err.Error(), row.wantErr)) {
				t.Fatalf("Validate() = %v, want an error naming %q", err, row.wantErr)
			}
			if err == nil && !o.InitCA && (o.ReadyFile != "/tmp/x/ready.json" || o.BackingDir != "/tmp/x/backing" ||
				o.NFSServer != NFSServerGanesha && row.o.NFSServer == "") {
				t.Fatalf("defaults: %+v", o)
			}
		})
	}
	if err := run([]string{"--help"}, io.Discard); err != nil {
		t.Fatalf("--help: %v", err)
	}
	caDir := t.TempDir()
	if err := run([]string{"--init-ca", "--ca-dir", caDir}, io.Discard); err != nil {
		t.Fatalf("--init-ca: %v", err)
	}
	if _, err := os.Stat(filepath.Join(caDir, "ca.key")); err != nil {
		t.Fatalf("--init-ca made no CA: %v", err)
	}
	if err := run([]string{"--dir", "rel"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Fatalf("--dir rel: %v", err)
	}
}

func TestToBackend(t *testing.T) {
	ap := fakeaws.AccessPoint{AccessPointId: "fsap-1", FileSystemId: "fs-1", RootDirectory: fakeaws.RootDirectory{Path: "/d",
		CreationInfo: &fakeaws.CreationInfo{OwnerUid: 7, OwnerGid: 8, Permissions: "2775"}}}
	got, ok := toBackend(ap)
	if !ok || got.RootDir != "/d" || got.Creation == nil || *got.Creation != (nfsbackend.CreationInfo{UID: 7, GID: 8, Permissions: 0o2775}) {
		t.Fatalf("toBackend = %+v, %v", got, ok)
	}
	if got, ok := toBackend(fakeaws.AccessPoint{AccessPointId: "fsap-2"}); !ok || got.RootDir != "/" || got.Creation != nil {
		t.Fatalf("no root directory: %+v, %v", got, ok)
	}
	ap.RootDirectory.CreationInfo.Permissions = "99"
	if _, ok := toBackend(ap); ok {
		t.Fatal("accepted permissions 99")
	}
}
