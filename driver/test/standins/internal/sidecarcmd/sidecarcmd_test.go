package sidecarcmd

import (
	"bytes"
	"errors"
	"flag"
	"reflect"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/sidecarflags"
)

// testOptions has one flag of its own, one ignored flag of a real sidecar and one cross-flag rule.
type testOptions struct{ Address string }

func (o *testOptions) AddFlags(fs *sidecarflags.FlagSet) {
	fs.StringVar(&o.Address, "csi-address", "/run/csi/socket", "socket")
	fs.Ignore(false, "metrics-path")
}

func (o *testOptions) Validate() error {
	if !strings.HasPrefix(o.Address, "/") {
		return errors.New("--csi-address " + o.Address + ": want an absolute path")
	}
	return nil
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name        string
		args        []string
		want        testOptions
		wantIgnored []string
		wantErr     string
		wantCode    int
	}{
		{name: "defaults", want: testOptions{Address: "/run/csi/socket"}},
		{name: "flag and ignored flag", args: []string{"--csi-address=/csi/csi.sock", "--metrics-path=/m"},
			want: testOptions{Address: "/csi/csi.sock"}, wantIgnored: []string{"--metrics-path=/m"}},
		{name: "invalid", args: []string{"--csi-address=csi.sock"}, wantErr: "--csi-address csi.sock: want an absolute path", wantCode: 2},
		{name: "unknown flag", args: []string{"--csi-adress=/x"}, wantErr: "flag provided but not defined: -csi-adress", wantCode: 2},
		{name: "help", args: []string{"-h"}, wantErr: flag.ErrHelp.Error(), wantCode: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o testOptions
			ignored, err := Parse("x-standin", &o, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
				}
				var stderr bytes.Buffer
				if code := ExitCode("x-standin", err, &stderr); code != tt.wantCode {
					t.Errorf("ExitCode = %d, want %d", code, tt.wantCode)
				}
				if tt.wantCode != 0 && !strings.HasPrefix(stderr.String(), "x-standin: "+tt.wantErr) {
					t.Errorf("stderr = %q, want the stand-in's name and the error", stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if o != tt.want || !reflect.DeepEqual(ignored, tt.wantIgnored) {
				t.Errorf("Parse(%q) = %+v, ignored %q; want %+v, %q", tt.args, o, ignored, tt.want, tt.wantIgnored)
			}
		})
	}
}
