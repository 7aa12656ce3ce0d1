package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// Options are the command-line options of the fakeaws program.
type Options struct {
	// Addr is where to listen (host:port; port 0 picks a free one).
	Addr string
	// Region, AccountID, InstanceZone, InstanceID, AccessPointQuota and CredentialDuration map onto
	// fakeaws.Options.
	Region             string
	AccountID          string
	InstanceZone       string
	InstanceID         string
	AccessPointQuota   int
	CredentialDuration time.Duration
	// Zones are NAME=ID pairs replacing the default zones.
	Zones []string
	// SeedFile is a JSON fakeaws.Seed to load at start.
	SeedFile string
	// Faults are API:key=value,... specs (fakeaws.ParseFaultSpec).
	Faults []string
	// Roles are ARN[,external-id=VALUE] roles STS lets callers assume.
	Roles []string
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:0", "listen address host:port (port 0 picks a free port; the URL is printed as the first line of stdout)")
	fs.StringVar(&o.Region, "region", "us-east-1", "region the fake serves")
	fs.StringVar(&o.AccountID, "account-id", "123456789012", "12-digit account that owns every resource")
	fs.StringVar(&o.InstanceZone, "instance-zone", "", "zone name IMDS reports for the instance (default: the first zone)")
	fs.StringVar(&o.InstanceID, "instance-id", "", "instance ID IMDS reports (default i-0123456789abcdef0)")
	fs.IntVar(&o.AccessPointQuota, "access-point-quota", 10000, "access points allowed per file system (AccessPointLimitExceeded beyond)")
	fs.DurationVar(&o.CredentialDuration, "credential-duration", 0, "lifetime of STS temporary credentials, overriding DurationSeconds (0: as requested, default 1h)")
	fs.StringSliceVar(&o.Zones, "zone", nil, "NAME=ID zone, repeatable, replacing the default <region>a/b/c zones (e.g. us-east-1a=use1-az1)")
	fs.StringVar(&o.SeedFile, "seed-file", "", "JSON file with file systems, mount targets, access points and roles to start with (see README)")
	fs.StringArrayVar(&o.Faults, "fault", nil, "API:key=value[,key=value] fault, repeatable; keys latency, throttle-rate, throttle-probability, error-probability, error-status; API * applies to every operation (e.g. CreateAccessPoint:latency=20ms)")
	fs.StringArrayVar(&o.Roles, "role", nil, "ARN[,external-id=VALUE] role STS lets callers assume, repeatable")
}

// Validate checks the options and returns the fakeaws options they describe.
func (o *Options) Validate() (fakeaws.Options, error) {
	var fo fakeaws.Options
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return fo, fmt.Errorf("--addr %q: want host:port such as 127.0.0.1:0", o.Addr)
	}
	if o.Region == "" || strings.Count(o.Region, "-") < 2 {
		return fo, fmt.Errorf("--region %q: want a region name such as us-east-1", o.Region)
	}
	if len(o.AccountID) != 12 || strings.Trim(o.AccountID, "0123456789") != "" {
		return fo, fmt.Errorf("--account-id %q: want 12 digits", o.AccountID)
	}
	if o.AccessPointQuota < 1 {
		return fo, fmt.Errorf("--access-point-quota %d: want an integer >= 1", o.AccessPointQuota)
	}
	if o.CredentialDuration < 0 {
		return fo, fmt.Errorf("--credential-duration %s: want a duration >= 0", o.CredentialDuration)
	}
	fo = fakeaws.Options{
		Region: o.Region, AccountID: o.AccountID, AccessPointQuota: o.AccessPointQuota,
		InstanceZone: o.InstanceZone, InstanceID: o.InstanceID, CredentialDuration: o.CredentialDuration,
	}
	for _, z := range o.Zones {
		name, id, ok := strings.Cut(z, "=")
		if !ok || name == "" || id == "" {
			return fo, fmt.Errorf("--zone %q: want NAME=ID such as us-east-1a=use1-az1", z)
		}
		fo.Zones = append(fo.Zones, fakeaws.Zone{Name: name, ID: id})
	}
	zones := fo.Zones
	if len(zones) == 0 {
		p := fakeaws.ZoneIDPrefix(o.Region)
		zones = []fakeaws.Zone{{Name: o.Region + "a", ID: p + "-az1"}, {Name: o.Region + "b"}, {Name: o.Region + "c"}}
	}
	if o.InstanceZone != "" {
		found := false
		for _, z := range zones {
			found = found || z.Name == o.InstanceZone
		}
		if !found {
			return fo, fmt.Errorf("--instance-zone %q: want one of the zones %v", o.InstanceZone, zoneNames(zones))
		}
	}
	for _, f := range o.Faults {
		if _, _, err := fakeaws.ParseFaultSpec(f); err != nil {
			return fo, fmt.Errorf("--fault: %w", err)
		}
	}
	for _, r := range o.Roles {
		if _, _, err := parseRole(r); err != nil {
			return fo, err
		}
	}
	return fo, nil
}

func zoneNames(zs []fakeaws.Zone) []string {
	out := make([]string, len(zs))
	for i, z := range zs {
		out[i] = z.Name
	}
	return out
}

// parseRole parses ARN[,external-id=VALUE].
func parseRole(spec string) (arn, externalID string, err error) {
	arn, ext, hasExt := strings.Cut(spec, ",external-id=")
	if !strings.HasPrefix(arn, "arn:") || !strings.Contains(arn, ":role/") {
		return "", "", fmt.Errorf("--role %q: want ARN[,external-id=VALUE] with ARN like arn:aws:iam::123456789012:role/name", spec)
	}
	if hasExt && ext == "" {
		return "", "", fmt.Errorf("--role %q: external-id is empty; leave it out to accept any external ID", spec)
	}
	return arn, ext, nil
}
