package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	const reg = "--kubelet-registration-path=/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock"
	tests := []struct {
		name        string
		args        []string
		want        Options
		wantIgnored []string
		wantErr     string
	}{
		{name: "defaults", args: []string{reg},
			want: Options{CSIAddress: "/run/csi/socket", KubeletRegistrationPath: "/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock",
				PluginRegistrationPath: "/registration", Timeout: time.Second}},
		{name: "every implemented flag, single dash as Go's flag package allows",
			args: []string{reg, "-csi-address", "/csi/csi.sock", "--plugin-registration-path=/r", "--health-port=9809", "--timeout=5s", "-v=5", "--mode=registration"},
			want: Options{CSIAddress: "/csi/csi.sock", KubeletRegistrationPath: "/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock",
				PluginRegistrationPath: "/r", HealthPort: 9809, Timeout: 5 * time.Second, Mode: "registration"}},
		{name: "flags of the real registrar this stand-in ignores", args: []string{reg, "--connection-timeout=15s", "--enable-pprof", "--logging-format=json"},
			want: Options{CSIAddress: "/run/csi/socket", KubeletRegistrationPath: "/var/lib/kubelet/plugins/efs.csi.aws.com/csi.sock",
				PluginRegistrationPath: "/registration", Timeout: time.Second},
			wantIgnored: []string{"--connection-timeout=15s", "--enable-pprof=true", "--logging-format=json"}},
		{name: "no registration path", args: []string{"--csi-address=/csi/csi.sock"}, wantErr: "--kubelet-registration-path is required"},
		{name: "relative registration path", args: []string{"--kubelet-registration-path=csi.sock"}, wantErr: `--kubelet-registration-path "csi.sock": want an absolute path`},
		{name: "both health addresses", args: []string{reg, "--health-port=9809", "--http-endpoint=:9810"}, wantErr: "--health-port 9809 and --http-endpoint \":9810\" are both set"},
		{name: "zero timeout", args: []string{reg, "--timeout=0s"}, wantErr: "--timeout 0s: want a positive duration"},
		{name: "flag the real registrar does not have", args: []string{reg, "--csi-adress=/csi/csi.sock"}, wantErr: "flag provided but not defined: -csi-adress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ignored, err := parseOptions(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseOptions(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseOptions(%q): %v", tt.args, err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("parseOptions(%q) = %+v, want %+v", tt.args, *got, tt.want)
			}
			if !reflect.DeepEqual(ignored, tt.wantIgnored) {
				t.Errorf("ignored = %q, want %q", ignored, tt.wantIgnored)
			}
		})
	}
}

func TestHealthAddress(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{opts: Options{}, want: ""},
		{opts: Options{HTTPEndpoint: "127.0.0.1:10305"}, want: "127.0.0.1:10305"},
		{opts: Options{HealthPort: 9809}, want: ":9809"},
	}
	for _, tt := range tests {
		if got := tt.opts.healthAddress(); got != tt.want {
			t.Errorf("%+v.healthAddress() = %q, want %q", tt.opts, got, tt.want)
		}
	}
}
