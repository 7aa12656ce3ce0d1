package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateNodeFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "node defaults", args: []string{"--mode=node"}},
		{name: "all node flags", args: []string{"--mode=node", "--max-inflight-mount-calls-opt-in", "--max-inflight-mount-calls=10",
			"--volume-attach-limit-opt-in", "--volume-attach-limit=20", "--force-unmount-after-timeout", "--unmount-timeout=10s",
			"--vol-metrics-opt-in", "--vol-metrics-refresh-period=0.5", "--vol-metrics-fs-rate-limit=2",
			"--efs-utils-conf-overrides=mount:port_range_upper_bound=21449,mount-watchdog:poll_interval_sec=2", "--efs-cloudwatch-log-enabled"}},
		{name: "value without opt-in is accepted", args: []string{"--mode=all", "--max-inflight-mount-calls=3"}},
		{name: "node flag in controller mode is accepted", args: []string{"--mode=controller", "--vol-metrics-opt-in"}},
		{name: "inflight opt-in without value", args: []string{"--mode=node", "--max-inflight-mount-calls-opt-in"}, wantErr: "--max-inflight-mount-calls-opt-in needs --max-inflight-mount-calls > 0, got -1"},
		// upstream v3.4.1 (aws-efs-csi-driver@3fcc6bdd pkg/driver/options.go Validate) refuses only an opt-in without
		// a positive value: 0 and other values without the opt-in are accepted and have no effect.
		{name: "inflight zero without opt-in", args: []string{"--mode=node", "--max-inflight-mount-calls=0"}},
		{name: "inflight negative without opt-in", args: []string{"--mode=node", "--max-inflight-mount-calls=-7"}},
		{name: "inflight opt-in zero", args: []string{"--mode=node", "--max-inflight-mount-calls-opt-in", "--max-inflight-mount-calls=0"}, wantErr: "--max-inflight-mount-calls-opt-in needs --max-inflight-mount-calls > 0, got 0"},
		{name: "attach zero without opt-in", args: []string{"--mode=node", "--volume-attach-limit=0"}},
		{name: "attach opt-in zero", args: []string{"--mode=node", "--volume-attach-limit-opt-in", "--volume-attach-limit=0"}, wantErr: "--volume-attach-limit-opt-in needs --volume-attach-limit > 0, got 0"},
		{name: "unmount timeout zero", args: []string{"--mode=node", "--force-unmount-after-timeout", "--unmount-timeout=0s"}},
		{name: "attach opt-in without value", args: []string{"--mode=node", "--volume-attach-limit-opt-in"}, wantErr: "--volume-attach-limit-opt-in needs --volume-attach-limit > 0"},
		{name: "attach negative without opt-in", args: []string{"--mode=node", "--volume-attach-limit=-5"}},
		{name: "refresh period", args: []string{"--mode=node", "--vol-metrics-refresh-period=-1"}, wantErr: "--vol-metrics-refresh-period -1: want a positive number of minutes"},
		{name: "rate limit", args: []string{"--mode=node", "--vol-metrics-fs-rate-limit=0"}, wantErr: "--vol-metrics-fs-rate-limit 0"},
		{name: "override form", args: []string{"--mode=node", "--efs-utils-conf-overrides=region=x"}, wantErr: `--efs-utils-conf-overrides: invalid efs-utils configuration: override "region=x": want section:key=value`},
		{name: "override key", args: []string{"--mode=node", "--efs-utils-conf-overrides=mount:regoin=x"}, wantErr: `--efs-utils-conf-overrides: invalid efs-utils configuration: override mount:regoin=x: section [mount] has no key "regoin"`},
		{name: "relative path", args: []string{"--mode=node", "--efs-utils-state-dir=run/efs"}, wantErr: `--efs-utils-state-dir "run/efs": want an absolute path`},
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

// TestOptInFlags states upstream's getMaxInflightMountCalls/getVolumeAttachLimit: the values take effect only
// with their opt-in flags.
func TestOptInFlags(t *testing.T) {
	tests := []struct {
		args       []string
		inflight   int
		maxVolumes int64
	}{
		{[]string{"--mode=node"}, 0, 0},
		{[]string{"--mode=node", "--max-inflight-mount-calls=3", "--volume-attach-limit=20"}, 0, 0},
		{[]string{"--mode=node", "--max-inflight-mount-calls-opt-in", "--max-inflight-mount-calls=3"}, 3, 0},
		{[]string{"--mode=node", "--volume-attach-limit-opt-in", "--volume-attach-limit=20"}, 0, 20},
	}
	for _, tt := range tests {
		o := parse(t, tt.args...)
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		if got, gotV := o.Node.inflightCap(), o.Node.volumeLimit(); got != tt.inflight || gotV != tt.maxVolumes {
			t.Errorf("%v: in-flight cap %d, volume limit %d; want %d, %d", tt.args, got, gotV, tt.inflight, tt.maxVolumes)
		}
	}
}

// TestUpstreamFlagsAcceptedWithWarning: flags of upstream v3.4.1 this driver does not implement, node flags given to
// a controller, and malformed --tags entries start the driver with one warning line each instead of exit 2.
func TestUpstreamFlagsAcceptedWithWarning(t *testing.T) {
	o := parse(t, "--mode=controller", "--s3files-cloudwatch-log-enabled", "--s3files-cloudwatch-metrics-enabled=false",
		"--s3files-utils-conf-overrides=mount:x=y", "--vol-metrics-opt-in", "--tags=team:storage a:b:c")
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want the upstream flags accepted", err)
	}
	got := strings.Join(o.Warnings(), "\n")
	for _, want := range []string{
		"--s3files-cloudwatch-log-enabled=true is an upstream flag this driver ignores: S3 Files is not supported",
		"--s3files-cloudwatch-metrics-enabled=false is an upstream flag",
		"--s3files-utils-conf-overrides=mount:x=y is an upstream flag",
		"--vol-metrics-opt-in is a node flag: ignored with --mode=controller",
		`--tags entry "a:b:c" skipped`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if n := len(o.Warnings()); n != 5 {
		t.Errorf("%d warnings, want one line each (5)", n)
	}
}

func TestRenderConfFromEnvironment(t *testing.T) {
	o := parse(t, "--mode=node", "--efs-utils-conf-overrides=mount:stunnel_cafile=/ca.pem", "--debug-logs")
	env := env{region: "eu-west-1", node: readNodeEnv(envMap{"FIPS_ENABLED": "true", "PORT_RANGE_UPPER_BOUND": "21449"}.get)}
	b, err := renderConf(o, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nregion = eu-west-1", "fips_mode_enabled = true", "port_range_upper_bound = 21449", "stunnel_cafile = /ca.pem", "logging_level = DEBUG", "source = k8s"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("efs-utils.conf lacks %q", want)
		}
	}
	env.node.portRangeUpperBound = "many"
	if _, err := renderConf(o, env); err == nil || !strings.Contains(err.Error(), `PORT_RANGE_UPPER_BOUND "many"`) {
		t.Fatalf("bad PORT_RANGE_UPPER_BOUND: %v", err)
	}
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

// nodeTestArgs points every node path into a temporary directory and runs a stand-in watchdog (a sleep), so that
// node mode can run in-process without touching the machine's efs-utils paths.
func nodeTestArgs(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	watchdog := filepath.Join(dir, "watchdog")
	if err := os.WriteFile(watchdog, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{
		"--efs-utils-config-dir-path=" + filepath.Join(dir, "var-amazon-efs"), "--efs-utils-config-legacy-dir-path=" + filepath.Join(dir, "legacy"),
		"--efs-utils-static-files-path=" + filepath.Join(dir, "static"), "--efs-utils-config-link-path=" + filepath.Join(dir, "etc-amazon-efs"),
		"--efs-utils-state-dir=" + filepath.Join(dir, "run-efs"), "--efs-utils-watchdog-path=" + watchdog,
		"--publish-records-dir=" + filepath.Join(dir, "records"),
	}
}

// upstreamFlags is every flag of upstream v3.4.1 (pkg/driver/options.go, cmd/main.go) with a value its docs use.
var upstreamFlags = []string{
	"--endpoint=unix:/csi/csi.sock", "--efs-utils-config-dir-path=/var/amazon/efs",
	"--efs-utils-config-legacy-dir-path=/etc/amazon/efs-legacy", "--efs-utils-static-files-path=/etc/amazon/efs-static-files/",
	"--vol-metrics-opt-in", "--vol-metrics-refresh-period=240", "--vol-metrics-fs-rate-limit=5", "--delete-access-point-root-dir",
	"--adaptive-retry-mode=false", "--tags=environment:prod region:us-east-1", "--max-inflight-mount-calls-opt-in",
	"--max-inflight-mount-calls=10", "--volume-attach-limit-opt-in", "--volume-attach-limit=20", "--force-unmount-after-timeout",
	"--unmount-timeout=30s", "--debug-logs", "--efs-cloudwatch-log-enabled", "--s3files-cloudwatch-log-enabled=false",
	"--s3files-cloudwatch-metrics-enabled=true", "--efs-utils-conf-overrides=mount:port_range_upper_bound=21449",
	"--s3files-utils-conf-overrides=mount:x=y", "--http-endpoint=0.0.0.0:3301", "--metrics-cert-file=/c", "--metrics-key-file=/k",
	"--logtostderr", "--v=2", "--stderrthreshold=INFO",
}

// TestEveryUpstreamFlagIsAccepted: a container spec written for upstream v3.4.1 starts this driver in every mode.
func TestEveryUpstreamFlagIsAccepted(t *testing.T) {
	for _, mode := range []string{"all", "node", "controller"} {
		o := parse(t, append([]string{"--mode=" + mode}, upstreamFlags...)...)
		if err := o.Validate(); err != nil {
			t.Errorf("--mode=%s with upstream's flags: %v", mode, err)
		}
	}
}
