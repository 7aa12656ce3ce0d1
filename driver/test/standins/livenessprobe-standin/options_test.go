package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	defaults := Options{CSIAddress: "/run/csi/socket", HealthPort: "9808", ProbeTimeout: 3 * time.Second}
	tests := []struct {
		name        string
		args        []string
		want        Options
		wantAddress string
		wantIgnored []string
		wantErr     string
	}{
		{name: "defaults", want: defaults, wantAddress: "0.0.0.0:9808"},
		{name: "health port", args: []string{"--csi-address=/csi/csi.sock", "--health-port=10302", "--probe-timeout=1s"},
			want: Options{CSIAddress: "/csi/csi.sock", HealthPort: "10302", ProbeTimeout: time.Second}, wantAddress: "0.0.0.0:10302"},
		{name: "http endpoint", args: []string{"-csi-address", "unix:///csi/csi.sock", "-http-endpoint=127.0.0.1:10303"},
			want:        Options{CSIAddress: "unix:///csi/csi.sock", HealthPort: "9808", HTTPEndpoint: "127.0.0.1:10303", ProbeTimeout: 3 * time.Second},
			wantAddress: "127.0.0.1:10303"},
		{name: "metrics flags of the real livenessprobe are ignored", args: []string{"--metrics-address=:9090", "--metrics-path=/m"},
			want:        Options{CSIAddress: "/run/csi/socket", HealthPort: "9808", ProbeTimeout: 3 * time.Second, MetricsAddress: ":9090"},
			wantAddress: "0.0.0.0:9808", wantIgnored: []string{"--metrics-path=/m", "--metrics-address=:9090"}},
		{name: "health port and http endpoint", args: []string{"--health-port=1", "--http-endpoint=:2"}, wantErr: "--health-port 1 and --http-endpoint :2 are both set"},
		{name: "metrics address and http endpoint", args: []string{"--metrics-address=:1", "--http-endpoint=:2"}, wantErr: "--metrics-address :1 and --http-endpoint :2 are both set"},
		{name: "port not a number", args: []string{"--health-port=healthz"}, wantErr: `--health-port "healthz": want a port in [0, 65535]`},
		{name: "zero timeout", args: []string{"--probe-timeout=0s"}, wantErr: "--probe-timeout 0s: want a positive duration"},
		{name: "flag the real livenessprobe does not have", args: []string{"--kubelet-registration-path=/x"}, wantErr: "flag provided but not defined: -kubelet-registration-path"},
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
			if addr := got.listenAddress(); addr != tt.wantAddress {
				t.Errorf("listenAddress() = %q, want %q", addr, tt.wantAddress)
			}
			if !reflect.DeepEqual(ignored, tt.wantIgnored) {
				t.Errorf("ignored = %q, want %q", ignored, tt.wantIgnored)
			}
		})
	}
}
