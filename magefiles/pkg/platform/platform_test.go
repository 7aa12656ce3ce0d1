package platform

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	amd := Platform{OS: "linux", Arch: "amd64"}
	arm := Platform{OS: "linux", Arch: "arm64"}
	s390 := Platform{OS: "linux", Arch: "s390x"}
	tests := []struct {
		name    string
		value   string
		want    []Platform
		wantErr string
	}{
		{name: "empty means amd64 and arm64", value: "", want: []Platform{amd, arm}},
		{name: "blank means amd64 and arm64", value: "  ", want: Supported()},
		{name: "ppc64le and s390x on request", value: "linux/s390x,linux/ppc64le", want: []Platform{{OS: "linux", Arch: "ppc64le"}, s390}},
		{name: "one", value: "linux/arm64", want: []Platform{arm}},
		{name: "comma list kept in release order", value: "linux/s390x,linux/amd64", want: []Platform{amd, s390}},
		{name: "spaces and duplicates", value: "linux/amd64 linux/amd64, linux/arm64", want: []Platform{amd, arm}},
		{name: "unknown arch", value: "linux/mips", wantErr: `unknown platform "linux/mips": want a comma-separated list of linux/amd64, linux/arm64, linux/ppc64le, linux/s390x`},
		{name: "unsupported os", value: "darwin/arm64", wantErr: `unknown platform "darwin/arm64"`},
		{name: "missing os", value: "amd64", wantErr: `unknown platform "amd64"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want it to contain %q", tt.value, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.value, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) = %v, want %v", tt.value, got, tt.want)
			}
		})
	}
}

func TestDirAndString(t *testing.T) {
	p := Platform{OS: "linux", Arch: "ppc64le"}
	if p.String() != "linux/ppc64le" || p.Dir() != "linux_ppc64le" {
		t.Fatalf("String()=%q Dir()=%q", p.String(), p.Dir())
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "linux/amd64", "linux/amd64,linux/s390x", "darwin/arm64", " , "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := Parse(value)
		if err != nil {
			return
		}
		// Whatever was accepted must round-trip through its own string form.
		names := make([]string, len(got))
		for i, p := range got {
			names[i] = p.String()
		}
		again, err := Parse(strings.Join(names, ","))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip of %q: got %v, %v; want %v", value, again, err, got)
		}
	})
}
