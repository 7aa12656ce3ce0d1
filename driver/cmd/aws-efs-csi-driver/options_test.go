package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func parse(t *testing.T, args ...string) *Options {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var o Options
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &o
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults"},
		{name: "controller", args: []string{"--mode=controller", "--endpoint=unix:///tmp/csi.sock", "--http-endpoint=127.0.0.1:3301",
			"--tags=a:b c:d", "--delete-access-point-root-dir", "--adaptive-retry-mode=false", "--region=us-east-1"}},
		{name: "node", args: []string{"--mode=node"}},
		{name: "unknown mode", args: []string{"--mode=both"}, wantErr: `--mode (or EFS_CSI_DRIVER_MODE) "both": want one of controller, node, all`},
		// Upstream accepts tcp://host:port (util.ParseEndpoint); so do we.
		{name: "tcp endpoint", args: []string{"--endpoint=tcp://127.0.0.1:10000"}},
		{name: "tcp endpoint without port", args: []string{"--endpoint=tcp://127.0.0.1"}, wantErr: `--endpoint "tcp://127.0.0.1": want tcp://host:port`},
		{name: "unix with a host", args: []string{"--endpoint=unix://csi/csi.sock"}, wantErr: `--endpoint "unix://csi/csi.sock": want unix:///`},
		{name: "relative socket", args: []string{"--endpoint=unix:csi.sock"}, wantErr: `--endpoint "unix:csi.sock"`},
		{name: "upstream short form", args: []string{"--endpoint=unix:/csi/csi.sock"}},
		{name: "bad http endpoint", args: []string{"--http-endpoint=3301"}, wantErr: `--http-endpoint "3301": want host:port`},
		{name: "cert without key", args: []string{"--http-endpoint=:3301", "--metrics-cert-file=/c"}, wantErr: "--metrics-cert-file and --metrics-key-file"},
		{name: "tls without endpoint", args: []string{"--metrics-cert-file=/c", "--metrics-key-file=/k"}, wantErr: "needs --http-endpoint"},
		{name: "malformed tags start with a warning (upstream skips them)", args: []string{"--tags=a:b:c"}},
		{name: "bad resync", args: []string{"--gid-resync-period=0s"}, wantErr: "--gid-resync-period 0s"},
		{name: "relative work dir", args: []string{"--delete-access-point-root-dir", "--access-point-root-dir-work-dir=pv"}, wantErr: "--access-point-root-dir-work-dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := parse(t, tt.args...).Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRunVersionAndBadFlags(t *testing.T) {
	var out bytes.Buffer
	stdout = &out
	t.Cleanup(func() { stdout = os.Stdout })
	if code := run(t.Context(), []string{"--version"}); code != 0 {
		t.Errorf("--version exit code = %d, want 0", code)
	}
	// upstream v3.4.1 prints a JSON document (aws-efs-csi-driver@3fcc6bdd cmd/main.go GetVersionJSON)
	var doc map[string]string
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["driverVersion"] == "" || doc["platform"] == "" {
		t.Errorf("--version printed %q (%v), want upstream's JSON with driverVersion and platform", out.String(), err)
	}
	if code := run(t.Context(), []string{"--mode=sideways"}); code != 2 {
		t.Errorf("bad --mode exit code = %d, want 2", code)
	}
	if code := run(t.Context(), []string{"--no-such-flag"}); code != 2 {
		t.Errorf("unknown flag exit code = %d, want 2", code)
	}
}

// TestModeFromEnvironment: the operator's manifests select the mode with EFS_CSI_DRIVER_MODE (the upstream driver
// has no --mode flag); an explicit --mode wins, and neither means all.
func TestModeFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want Mode
	}{
		{name: "neither", want: ModeAll},
		{name: "environment", env: "node", want: ModeNode},
		{name: "flag wins", args: []string{"--mode=controller"}, env: "node", want: ModeController},
		{name: "flag alone", args: []string{"--mode=node"}, want: ModeNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			var o Options
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			o.ApplyEnv(fs, func(name string) string {
				if name == "EFS_CSI_DRIVER_MODE" {
					return tc.env
				}
				return ""
			})
			if o.Mode != tc.want {
				t.Errorf("mode %q, want %q", o.Mode, tc.want)
			}
		})
	}
}
