package sidecarflags

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantAddress string
		wantIgnored []string
		wantErr     string
	}{
		{name: "double dash", args: []string{"--address=/csi/csi.sock", "--v=2"}, wantAddress: "/csi/csi.sock"},
		{name: "single dash and separate value", args: []string{"-address", "/a", "-v", "4"}, wantAddress: "/a"},
		{name: "ignored value and bool flags", args: []string{"--logging-format=json", "--automaxprocs", "--log-text-split-stream=false"},
			wantIgnored: []string{"--automaxprocs=true", "--log-text-split-stream=false", "--logging-format=json"}},
		{name: "flag of neither", args: []string{"--no-such-flag=1"}, wantErr: "flag provided but not defined: -no-such-flag"},
		{name: "bad verbosity", args: []string{"--v=high"}, wantErr: `invalid value "high" for flag -v`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := New("test")
			address := fs.String("address", "", "")
			fs.AddLogging()
			err := fs.Parse(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if *address != tt.wantAddress {
				t.Errorf("address = %q, want %q", *address, tt.wantAddress)
			}
			if got := fs.Ignored(); !reflect.DeepEqual(got, tt.wantIgnored) {
				t.Errorf("Ignored() = %q, want %q", got, tt.wantIgnored)
			}
		})
	}
}

// TestVerbosityReachesKlog checks that -v sets klog's verbosity, which the stand-ins log through.
func TestVerbosityReachesKlog(t *testing.T) {
	fs := New("test")
	fs.AddLogging()
	if err := fs.Parse([]string{"--v=5"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fs.Set("v", "0") })
	if !klog.V(5).Enabled() || klog.V(6).Enabled() {
		t.Fatalf("after --v=5: klog.V(5)=%v, klog.V(6)=%v; want true, false", klog.V(5).Enabled(), klog.V(6).Enabled())
	}
}
