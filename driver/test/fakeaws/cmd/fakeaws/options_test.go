package main

import (
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

func validOptions() Options {
	return Options{Addr: "127.0.0.1:0", Region: "us-east-1", AccountID: "123456789012", AccessPointQuota: 10000}
}

func TestValidate(t *testing.T) {
	rows := []struct {
		name    string
		edit    Options
		wantErr string
	}{
		{"defaults", Options{}, ""},
		{"zones and instance zone", Options{Zones: []string{"us-east-1a=use1-az4", "us-east-1f=use1-az5"}, InstanceZone: "us-east-1f"}, ""},
		{"fault and role", Options{Faults: []string{"*:latency=1ms"}, Roles: []string{"arn:aws:iam::210987654321:role/x,external-id=e"}}, ""},
		{"bad addr", Options{Addr: "8080"}, "--addr"},
		{"bad region", Options{Region: "useast1"}, "--region"},
		{"bad account", Options{AccountID: "12345"}, "--account-id"},
		{"bad quota", Options{AccessPointQuota: -1}, "--access-point-quota"},
		{"bad duration", Options{CredentialDuration: -time.Second}, "--credential-duration"},
		{"bad zone", Options{Zones: []string{"us-east-1a"}}, "--zone"},
		{"instance zone not a zone", Options{InstanceZone: "us-east-1q"}, "--instance-zone"},
		{"bad fault", Options{Faults: []string{"CreateAccessPoint"}}, "--fault"},
		{"bad role", Options{Roles: []string{"efs-role"}}, "--role"},
		{"empty external id", Options{Roles: []string{"arn:aws:iam::210987654321:role/x,external-id="}}, "--role"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			o := validOptions()
			if row.edit.Addr != "" {
				o.Addr = row.edit.Addr
			}
			if row.edit.Region != "" {
				o.Region = row.edit.Region
			}
			if row.edit.AccountID != "" {
				o.AccountID = row.edit.AccountID
			}
			if row.edit.AccessPointQuota != 0 {
				o.AccessPointQuota = row.edit.AccessPointQuota
			}
			o.CredentialDuration, o.Zones, o.InstanceZone = row.edit.CredentialDuration, row.edit.Zones, row.edit.InstanceZone
			o.Faults, o.Roles = row.edit.Faults, row.edit.Roles
			_, err := o.Validate()
			if row.wantErr == "" && err != nil || row.wantErr != "" && (err == nil || !strings.Contains(err.Error(), row.wantErr)) {
				t.Errorf("Validate() = %v, want an error naming %q", err, row.wantErr)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	if err := run([]string{"--help"}, io.Discard); err != nil {
		t.Errorf("--help: %v", err)
	}
	if err := run([]string{"--region", "x"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--region") {
		t.Errorf("--region x: %v", err)
	}
	if err := run([]string{"--no-such-flag"}, io.Discard); err == nil {
		t.Error("--no-such-flag accepted")
	}
}

func TestConfigure(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(seed, []byte(`{
  "fileSystems": [{"FileSystemId": "fs-0123456789abcdef0", "AvailabilityZoneName": "us-east-1b",
                   "mountTargets": [{"zone": "us-east-1b"}],
                   "accessPoints": [{"ClientToken": "t1", "PosixUser": {"Uid": 7, "Gid": 8}, "RootDirectory": {"Path": "/d"}}]},
                  {"Tags": [{"Key": "Name", "Value": "second"}]}],
  "roles": [{"arn": "arn:aws:iam::210987654321:role/efs", "externalId": "ext-1"}]
}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fakeaws.New(fakeaws.Options{})
	o := validOptions()
	o.SeedFile = seed
	o.Faults = []string{"CreateAccessPoint:error-probability=1"}
	o.Roles = []string{"arn:aws:iam::210987654321:role/other"}
	if err := configure(srv, o); err != nil {
		t.Fatalf("configure: %v", err)
	}
	fss := srv.FileSystems()
	if len(fss) != 2 || fss[0].AvailabilityZoneId != "use1-az2" || fss[1].Name != "second" {
		t.Errorf("file systems = %+v", fss)
	}
	aps := srv.AccessPoints("fs-0123456789abcdef0")
	if len(aps) != 1 || aps[0].PosixUser.Gid != 8 || len(srv.MountTargets("fs-0123456789abcdef0")) != 1 {
		t.Errorf("access points %+v, mount targets %+v", aps, srv.MountTargets("fs-0123456789abcdef0"))
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("POST", "/2015-02-01/access-points",
		strings.NewReader(`{"ClientToken": "new", "FileSystemId": "fs-0123456789abcdef0"}`)))
	if rec.Code != 500 || rec.Header().Get("X-Amzn-ErrorType") != "InternalServerError" {
		t.Errorf("CreateAccessPoint under --fault error-probability=1: %d %s", rec.Code, rec.Body)
	}
	for _, role := range []string{"efs&ExternalId=ext-1", "other"} {
		rec = httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/", strings.NewReader(
			"Action=AssumeRole&Version=2011-06-15&RoleSessionName=s1&RoleArn=arn:aws:iam::210987654321:role/"+role))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		srv.ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<AccessKeyId>ASIA") {
			t.Errorf("AssumeRole %s: %d %s", role, rec.Code, rec.Body)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"fileSystems": [{"AvailabilityZoneName": "mars-1a"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o = validOptions()
	o.SeedFile = bad
	if err := configure(fakeaws.New(fakeaws.Options{}), o); err == nil || !strings.Contains(err.Error(), "mars-1a") {
		t.Errorf("seed with an unknown zone: %v", err)
	}
}
