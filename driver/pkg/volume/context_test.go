package volume

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

var contextCases = []struct {
	name    string
	in      map[string]string
	want    map[string]string // Attributes() of the parsed context
	wantErr string
}{
	{name: "empty", in: map[string]string{}, want: map[string]string{}},
	{name: "eit false any case", in: map[string]string{"EncryptInTransit": "FALSE"}, want: map[string]string{"encryptInTransit": "false"}},
	{name: "ip", in: map[string]string{"mountTargetIP": "10.0.0.1"}, want: map[string]string{"mounttargetip": "10.0.0.1"}},
	{name: "ip map", in: map[string]string{"mounttargetipmap": `{"use1-az1":"10.0.0.1","us-east-1a":"10.0.0.1"}`}, want: map[string]string{"mounttargetipmap": `{"us-east-1a":"10.0.0.1","use1-az1":"10.0.0.1"}`}},
	{name: "crossaccount", in: map[string]string{"crossaccount": "true"}, want: map[string]string{"crossaccount": "true"}},
	{name: "provisioner identity ignored", in: map[string]string{KeyProvisionerIdentity: "123-efs"}, want: map[string]string{}},
	{name: "bad bool", in: map[string]string{"encryptInTransit": "maybe"}, wantErr: `encryptInTransit "maybe": want true or false`},
	{name: "bad ip", in: map[string]string{"mounttargetip": "10.0.0"}, wantErr: `want an IPv4 or IPv6 address`},
	{name: "bad map json", in: map[string]string{"mounttargetipmap": `[1]`}, wantErr: `want a JSON object`},
	{name: "bad map ip", in: map[string]string{"mounttargetipmap": `{"a":"x"}`}, wantErr: `want a non-empty zone and an IP address`},
	// v2.x's path attribute (removed upstream in v3.0.0) is still read, so such PVs mount.
	{name: "legacy path", in: map[string]string{"path": "/x/../y/"}, want: map[string]string{"path": "/y"}},
	{name: "legacy path root", in: map[string]string{"path": "/"}, want: map[string]string{}},
	{name: "legacy path relative", in: map[string]string{"path": "x"}, wantErr: `path "x": want an absolute path`},
	{name: "unknown key", in: map[string]string{"subpath": "/x"}, wantErr: `unknown volume attribute "subpath"`},
}

func TestParseContext(t *testing.T) {
	for _, tt := range contextCases {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseContext(tt.in)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidContext) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseContext(%v) = %v, want error containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Attributes(); !maps.Equal(got, tt.want) {
				t.Fatalf("Attributes() = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzParseContext(f *testing.F) {
	f.Add("encryptInTransit", "true", "mounttargetipmap", `{"a":"10.0.0.1"}`)
	f.Add("mounttargetip", "::1", "crossaccount", "false")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		c, err := ParseContext(map[string]string{k1: v1, k2: v2})
		if err != nil {
			return
		}
		again, err := ParseContext(c.Attributes())
		if err != nil {
			t.Fatalf("re-parse of %v failed: %v", c.Attributes(), err)
		}
		if !maps.Equal(again.Attributes(), c.Attributes()) {
			t.Fatalf("round trip: %v != %v", again.Attributes(), c.Attributes())
		}
	})
}
