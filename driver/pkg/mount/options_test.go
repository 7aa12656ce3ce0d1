package mount

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

const (
	fsID = "fs-0123456789abcdef0"
	apID = "fsap-0123456789abcdef0"
)

func boolPtr(b bool) *bool { return &b }

var composeCases = []struct {
	name     string
	handle   string
	attrs    map[string]string
	flags    []string
	readOnly bool
	node     Node
	want     []string // options; source is checked separately where it matters
	wantErr  string
}{
	{name: "defaults to tls", handle: fsID, want: []string{"tls"}},
	{name: "encryptInTransit false", handle: fsID, attrs: map[string]string{"encryptInTransit": "false"}, want: nil},
	{name: "access point forces tls", handle: fsID + "::" + apID, want: []string{"tls", "accesspoint=" + apID}},
	{name: "access point with eit false still tls", handle: fsID + "::" + apID, attrs: map[string]string{"encryptInTransit": "false"}, want: []string{"tls", "accesspoint=" + apID}},
	{name: "readonly", handle: fsID, readOnly: true, want: []string{"tls", "ro"}},
	{name: "readonly drops rw", handle: fsID, flags: []string{"rw"}, readOnly: true, want: []string{"tls", "ro"}},
	{name: "user ro kept last", handle: fsID, flags: []string{"ro", "iam"}, want: []string{"iam", "tls", "ro"}},
	{name: "lower-cased keys, values kept", handle: fsID, flags: []string{"IAM", "RoleARN=arn:aws:iam::1:role/MyRole"}, want: []string{"iam", "rolearn=arn:aws:iam::1:role/MyRole", "tls"}},
	{name: "de-duplicated", handle: fsID, flags: []string{"iam", "iam", "lookupcache=pos,iam"}, want: []string{"iam", "lookupcache=pos", "tls"}},
	{name: "comma separated entry and empties", handle: fsID, flags: []string{"nfsvers=4.1,,noac", ""}, want: []string{"nfsvers=4.1", "noac", "tls"}},
	{name: "deprecated tls option", handle: fsID, flags: []string{"tls"}, want: []string{"tls"}},
	{name: "deprecated accesspoint option same as handle", handle: fsID + "::" + apID, flags: []string{"accesspoint=" + apID}, want: []string{"tls", "accesspoint=" + apID}},
	{name: "deprecated accesspoint option without handle ap", handle: fsID, flags: []string{"accesspoint=" + apID}, want: []string{"tls", "accesspoint=" + apID}},
	{name: "awscredsuri dropped", handle: fsID, flags: []string{"awscredsuri=/v2/creds"}, want: []string{"tls"}},
	{name: "mounttargetip attribute", handle: fsID, attrs: map[string]string{"mounttargetip": "10.0.0.5"}, want: []string{"tls", "mounttargetip=10.0.0.5"}},
	{name: "mounttargetip option equal to attribute", handle: fsID, attrs: map[string]string{"mounttargetip": "10.0.0.5"}, flags: []string{"mounttargetip=10.0.0.5"}, want: []string{"tls", "mounttargetip=10.0.0.5"}},
	{name: "ip map by zone ID", handle: fsID, node: Node{Zone: "us-east-1b", ZoneID: "use1-az2"},
		attrs: map[string]string{"mounttargetipmap": `{"use1-az1":"10.0.0.1","use1-az2":"10.0.0.2"}`}, want: []string{"tls", "mounttargetip=10.0.0.2"}},
	{name: "ip map keyed by zone name (older controller)", handle: fsID, node: Node{Zone: "us-east-1b", ZoneID: "use1-az2"},
		attrs: map[string]string{"mounttargetipmap": `{"us-east-1a":"10.0.0.1","us-east-1b":"10.0.0.2"}`}, want: []string{"tls", "mounttargetip=10.0.0.2"}},
	{name: "ip map without the node's zone picks the first zone", handle: fsID, node: Node{Zone: "us-east-1c"},
		attrs: map[string]string{"mounttargetipmap": `{"use1-az2":"10.0.0.2","use1-az1":"10.0.0.1"}`}, want: []string{"tls", "mounttargetip=10.0.0.1"}},
	{name: "attribute ip wins over map", handle: fsID, node: Node{ZoneID: "use1-az1"},
		attrs: map[string]string{"mounttargetip": "10.0.0.9", "mounttargetipmap": `{"use1-az1":"10.0.0.1"}`}, want: []string{"tls", "mounttargetip=10.0.0.9"}},
	{name: "crossaccount", handle: fsID, attrs: map[string]string{"crossaccount": "true"}, want: []string{"tls", "crossaccount"}},
	{name: "non-tls with port", handle: fsID, attrs: map[string]string{"encryptInTransit": "false"}, flags: []string{"port=2049"}, want: []string{"port=2049"}},

	{name: "tls with eit false", handle: fsID, attrs: map[string]string{"encryptInTransit": "false"}, flags: []string{"tls"},
		wantErr: "mount option tls conflicts with volume attribute encryptInTransit=false"},
	{name: "accesspoint option conflicts with handle", handle: fsID + "::" + apID, flags: []string{"accesspoint=fsap-99999999999999999"},
		wantErr: "mount option accesspoint=fsap-99999999999999999 conflicts with access point " + apID},
	{name: "bad accesspoint option", handle: fsID, flags: []string{"accesspoint=ap1"}, wantErr: "accesspoint=ap1: want accesspoint=fsap-"},
	{name: "crossaccount option", handle: fsID, flags: []string{"crossaccount"}, wantErr: "mount option crossaccount"},
	{name: "conflicting values", handle: fsID, flags: []string{"nfsvers=4.0", "NFSVERS=4.1"}, wantErr: "mount options nfsvers=4.0 and nfsvers=4.1 conflict"},
	{name: "ro and rw", handle: fsID, flags: []string{"ro", "rw"}, wantErr: "mount options ro and rw conflict"},
	{name: "hard and soft", handle: fsID, flags: []string{"soft,hard"}, wantErr: "mount options hard and soft conflict"},
	{name: "space in option", handle: fsID, flags: []string{"a b"}, wantErr: `mount option "a b": want no spaces`},
	{name: "empty key", handle: fsID, flags: []string{"=x"}, wantErr: `mount option "=x": want key or key=value`},
	{name: "iam without tls", handle: fsID, attrs: map[string]string{"encryptInTransit": "false"}, flags: []string{"iam"}, wantErr: "mount option iam needs TLS"},
	{name: "port with tls", handle: fsID, flags: []string{"port=2049"}, wantErr: "mount option port=2049 conflicts with TLS"},
	{name: "bad mounttargetip option", handle: fsID, flags: []string{"mounttargetip=x"}, wantErr: "mounttargetip=x: want an IPv4 or IPv6 address"},
	{name: "mounttargetip option conflicts with attribute", handle: fsID, attrs: map[string]string{"mounttargetip": "10.0.0.5"}, flags: []string{"mounttargetip=10.0.0.6"},
		wantErr: "mount option mounttargetip=10.0.0.6 conflicts with volume attribute mounttargetip=10.0.0.5"},
	{name: "crossaccount with ip", handle: fsID, attrs: map[string]string{"crossaccount": "true", "mounttargetip": "10.0.0.5"},
		wantErr: "crossaccount=true conflicts with mount target IP 10.0.0.5"},
}

func TestCompose(t *testing.T) {
	for _, tt := range composeCases {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := compose(tt.handle, tt.attrs, tt.flags, tt.readOnly, tt.node)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Compose() error = %v, want ErrInvalidOption containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(spec.Options, tt.want) {
				t.Fatalf("options = %q, want %q", spec.Options, tt.want)
			}
			if spec.FSType != "efs" {
				t.Fatalf("fstype = %q", spec.FSType)
			}
		})
	}
}

func compose(handle string, attrs map[string]string, flags []string, ro bool, n Node) (Spec, error) {
	h, err := volume.ParseHandle(handle)
	if err != nil {
		return Spec{}, err
	}
	c, err := volume.ParseContext(attrs)
	if err != nil {
		return Spec{}, err
	}
	return Compose(Request{Handle: h, Context: c, MountFlags: flags, ReadOnly: ro, Node: n})
}

// TestComposeLegacyPathAttribute: v2.x PVs with the path volume attribute mount that directory, unless the handle
// names one (the handle wins, as in v2.x's node.go); with an access point the path is relative to its root.
func TestComposeLegacyPathAttribute(t *testing.T) {
	for _, tt := range []struct{ handle, path, want string }{
		{fsID, "/data", fsID + ":/data"},
		{fsID + ":/from-handle", "/data", fsID + ":/from-handle"},
		{fsID + "::" + apID, "/sub", fsID + ":/sub"},
	} {
		spec, err := compose(tt.handle, map[string]string{"path": tt.path}, nil, false, Node{})
		if err != nil || spec.Source != tt.want {
			t.Errorf("%s with path %s: source %q, %v; want %q", tt.handle, tt.path, spec.Source, err, tt.want)
		}
	}
}

func TestComposeSource(t *testing.T) {
	for handle, want := range map[string]string{
		fsID: fsID + ":/", fsID + ":/a/b": fsID + ":/a/b", "efs:" + fsID + ":/x:" + apID: fsID + ":/x",
	} {
		spec, err := compose(handle, nil, nil, false, Node{})
		if err != nil || spec.Source != want {
			t.Errorf("source of %s = %q, %v; want %q", handle, spec.Source, err, want)
		}
	}
}

func TestSpecKeyIgnoresOrder(t *testing.T) {
	a := Spec{Source: "s", FSType: "efs", Options: []string{"tls", "ro"}}
	b := Spec{Source: "s", FSType: "efs", Options: []string{"ro", "tls"}}
	if a.Key() != b.Key() {
		t.Fatalf("%q != %q", a.Key(), b.Key())
	}
}

// FuzzCompose checks that composing never panics, that every error is ErrInvalidOption, and that composing the
// composed options again (without the tls the driver adds) gives the same mount.
func FuzzCompose(f *testing.F) {
	for _, c := range composeCases {
		f.Add(strings.Join(c.flags, "|"), c.readOnly, c.attrs["encryptInTransit"] == "false")
	}
	f.Fuzz(func(t *testing.T, flags string, ro, noTLS bool) {
		c := volume.Context{}
		if noTLS {
			c.EncryptInTransit = boolPtr(false)
		}
		h := volume.Handle{FileSystemID: fsID}
		spec, err := Compose(Request{Handle: h, Context: c, MountFlags: strings.Split(flags, "|"), ReadOnly: ro})
		if err != nil {
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("error %v is not ErrInvalidOption", err)
			}
			return
		}
		// the driver adds tls itself; passed back as a (deprecated) option it would conflict with encryptInTransit=false
		back := slices.DeleteFunc(slices.Clone(spec.Options), func(o string) bool { return o == "tls" })
		again, err := Compose(Request{Handle: h, Context: c, MountFlags: back, ReadOnly: ro})
		if err != nil {
			t.Fatalf("re-compose of %q: %v", spec.Options, err)
		}
		if again.Key() != spec.Key() {
			t.Fatalf("re-compose changed the mount: %q -> %q", spec.Key(), again.Key())
		}
	})
}
