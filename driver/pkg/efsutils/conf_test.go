package efsutils

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var renderCases = []struct {
	name    string
	opts    ConfOptions
	want    []string // lines that must appear
	notWant []string
	wantErr string
}{
	{name: "defaults", opts: ConfOptions{},
		want:    []string{"logging_level = INFO", "#region = us-east-1", "fips_mode_enabled = false", "port_range_upper_bound = 21049", "[client-info]", "#source = k8s", "[cloudwatch-log]\nenabled = false"},
		notWant: []string{"\nregion ="}},
	{name: "region fips debug", opts: ConfOptions{Region: "eu-west-1", FIPS: true, Debug: true, ClientSource: "k8s"},
		want: []string{"\nregion = eu-west-1", "fips_mode_enabled = true", "logging_level = DEBUG", "stunnel_debug_enabled = true", "[client-info]\nsource = k8s"}},
	{name: "port range", opts: ConfOptions{PortRangeUpperBound: 21449}, want: []string{"port_range_upper_bound = 21449"}},
	{name: "port range too small", opts: ConfOptions{PortRangeUpperBound: 21000}, wantErr: "port range upper bound 21000: want at least 21049"},
	{name: "cloudwatch", opts: ConfOptions{CloudWatchLogs: true}, want: []string{"[cloudwatch-log]\nenabled = true"}},
	{name: "override activates a commented key", opts: ConfOptions{Overrides: []Override{{"mount", "stunnel_logs_file", "/tmp/x.log"}}},
		want: []string{"\nstunnel_logs_file = /tmp/x.log"}},
	{name: "override wins over settings", opts: ConfOptions{FIPS: true, Overrides: []Override{{"mount", "fips_mode_enabled", "false"}}},
		want: []string{"fips_mode_enabled = false"}, notWant: []string{"fips_mode_enabled = true"}},
	{name: "regional override", opts: ConfOptions{Overrides: []Override{{"mount.cn-north-1", "dns_name_suffix", "example.cn"}}},
		want: []string{"[mount.cn-north-1]\ndns_name_suffix = example.cn"}},
	{name: "unknown key", opts: ConfOptions{Overrides: []Override{{"mount", "regoin", "x"}}}, wantErr: `section [mount] has no key "regoin": want one of dns_name_format`},
}

func TestRender(t *testing.T) {
	for _, tt := range renderCases {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Render(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidConf) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Render() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("rendered conf lacks %q:\n%s", w, b)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(string(b), w) {
					t.Errorf("rendered conf has %q", w)
				}
			}
		})
	}
}

var overrideCases = []struct {
	in      string
	want    []Override
	wantErr string
}{
	{in: "", want: nil},
	{in: "mount:port_range_upper_bound=21449", want: []Override{{"mount", "port_range_upper_bound", "21449"}}},
	{in: " mount:region = us-west-2 , mount-watchdog:poll_interval_sec=2", want: []Override{{"mount", "region", "us-west-2"}, {"mount-watchdog", "poll_interval_sec", "2"}}},
	{in: "DEFAULT:logging_level=debug", want: []Override{{"DEFAULT", "logging_level", "debug"}}},
	{in: "mount:dns_name_format={fs_id}.efs.{region}.{dns_name_suffix}", want: []Override{{"mount", "dns_name_format", "{fs_id}.efs.{region}.{dns_name_suffix}"}}},
	{in: "mount", wantErr: `override "mount": want section:key=value`},
	{in: "mount:region", wantErr: `override "mount:region": want section:key=value`},
	{in: ":region=x", wantErr: `want section:key=value`},
	{in: "mount:=x", wantErr: `want section:key=value`},
	{in: "mounts:region=x", wantErr: "efs-utils.conf has no section [mounts]: want one of DEFAULT, mount,"},
	{in: "mount:bogus=1", wantErr: `section [mount] has no key "bogus"`},
	// upstream's parseConfOverrides takes any value: brackets in a value are not a section header
	{in: "mount:stunnel_logs_file=/var/log/[fs].log", want: []Override{{"mount", "stunnel_logs_file", "/var/log/[fs].log"}}},
	{in: "mount:region=a\nb", wantErr: "want section:key=value"},
}

func TestParseOverrides(t *testing.T) {
	for _, tt := range overrideCases {
		got, err := ParseOverrides(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseOverrides(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("ParseOverrides(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("ParseOverrides(%q)[%d] = %v, want %v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

// FuzzParseOverrides: no panics; what parses renders, and formatting the overrides parses back to the same.
func FuzzParseOverrides(f *testing.F) {
	for _, tt := range overrideCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ovs, err := ParseOverrides(s)
		if err != nil {
			return
		}
		if _, err := Render(ConfOptions{Overrides: ovs}); err != nil {
			t.Fatalf("parsed overrides %v do not render: %v", ovs, err)
		}
		parts := make([]string, len(ovs))
		for i, o := range ovs {
			parts[i] = o.String()
		}
		again, err := ParseOverrides(strings.Join(parts, ","))
		if err != nil || len(again) != len(ovs) {
			t.Fatalf("round trip of %v: %v, %v", ovs, again, err)
		}
		for i := range ovs {
			if again[i] != ovs[i] {
				t.Fatalf("round trip changed %v to %v", ovs[i], again[i])
			}
		}
	})
}

// TestRenderedConfReadByEFSUtils loads the rendered file with our efs-utils' own config module (the real reader),
// checking every required key is there and the settings arrive.
func TestRenderedConfReadByEFSUtils(t *testing.T) {
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("needs /usr/bin/python3 to run efs-utils' config reader; go tool mage test installs it")
	}
	_, here, _, _ := runtime.Caller(0)
	efsUtils := filepath.Join(filepath.Dir(here), "..", "..", "..", "efs-utils")
	b, err := Render(ConfOptions{Region: "us-west-2", FIPS: true, PortRangeUpperBound: 21449, ClientSource: "k8s",
		Overrides: []Override{{"mount-watchdog", "poll_interval_sec", "3"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ConfFile)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `import sys
from efs_utils import config
c = config.load(sys.argv[1], env={})
print(c.logging_level(), c.logging_max_bytes(), c.logging_file_count(), c.region(), c.dns_name_format(),
      c.dns_name_suffix("cn-north-1"), c.fips_mode_enabled(), c.port_range(), c.poll_interval_sec(),
      c.unmount_grace_period_sec(), c.client_source(), c.stunnel_cafile("us-iso-east-1"))`
	cmd := exec.CommandContext(t.Context(), py, "-c", script, path)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+efsUtils, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("efs-utils config reader: %v\n%s", err, out)
	}
	want := "INFO 1048576 10 us-west-2 {az}.{fs_id}.efs.{region}.{dns_name_suffix} amazonaws.com.cn True (20049, 21449) 3 30 k8s /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("efs-utils read\n%s\nwant\n%s", got, want)
	}
}

// upstreamTemplateKeys are the section:key pairs of the efs-utils.conf template of upstream v3.4.1
// (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd pkg/driver/efs_watch_dog.go efsUtilsConfigTemplate), active or
// commented out; its applyConfOverrides (pkg/driver/conf_overrides.go) accepts an override of exactly these.
var upstreamTemplateKeys = map[string][]string{
	"DEFAULT": {"logging_level", "logging_max_bytes", "logging_file_count", "state_file_dir_mode"},
	"mount": {"dns_name_format", "dns_name_suffix", "region", "stunnel_debug_enabled", "stunnel_logs_file",
		"stunnel_cafile", "stunnel_check_cert_hostname", "stunnel_check_cert_validity", "fips_mode_enabled",
		"port_range_lower_bound", "port_range_upper_bound", "optimize_readahead",
		"fall_back_to_mount_target_ip_address_enabled", "disable_fetch_ec2_metadata_token", "retry_nfs_mount_command",
		"retry_nfs_mount_command_count", "retry_nfs_mount_command_timeout_sec"},
	"mount.cn-north-1":      {"dns_name_suffix"},
	"mount.cn-northwest-1":  {"dns_name_suffix"},
	"mount.eu-isoe-west-1":  {"dns_name_suffix", "stunnel_cafile"},
	"mount.eusc-de-east-1":  {"dns_name_suffix", "stunnel_cafile"},
	"mount.us-iso-east-1":   {"dns_name_suffix", "stunnel_cafile"},
	"mount.us-iso-west-1":   {"dns_name_suffix", "stunnel_cafile"},
	"mount.us-isob-east-1":  {"dns_name_suffix", "stunnel_cafile"},
	"mount.us-isob-west-1":  {"dns_name_suffix", "stunnel_cafile"},
	"mount.us-isof-east-1":  {"dns_name_suffix", "stunnel_cafile"},
	"mount.us-isof-south-1": {"dns_name_suffix", "stunnel_cafile"},
	"mount-watchdog": {"enabled", "poll_interval_sec", "unmount_count_for_consistency", "unmount_grace_period_sec",
		"tls_cert_renewal_interval_min", "stunnel_health_check_enabled", "stunnel_health_check_interval_min",
		"stunnel_health_check_command_timeout_sec"},
	"client-info":    {"source"},
	"cloudwatch-log": {"enabled", "log_group_name", "retention_in_days"},
}

// TestEveryUpstreamTemplateKeyIsAnOverride: every key upstream's template has is accepted by
// --efs-utils-conf-overrides and lands in the rendered file.
func TestEveryUpstreamTemplateKeyIsAnOverride(t *testing.T) {
	for sec, keys := range upstreamTemplateKeys {
		for _, k := range keys {
			spec := sec + ":" + k + "=v-" + k
			ovs, err := ParseOverrides(spec)
			if err != nil {
				t.Errorf("upstream accepts %s; ParseOverrides: %v", spec, err)
				continue
			}
			b, err := Render(ConfOptions{Overrides: ovs})
			if err != nil {
				t.Errorf("Render with %s: %v", spec, err)
				continue
			}
			if !strings.Contains(sectionText(string(b), sec), "\n"+k+" = v-"+k+"\n") {
				t.Errorf("override %s not in section [%s] of\n%s", spec, sec, b)
			}
		}
	}
}

// TestEUSCSectionHasItsCA states upstream's [mount.eusc-de-east-1]: dns_name_suffix amazonaws.eu and the system CA
// bundle as stunnel_cafile (the European Sovereign Cloud is not signed by the Amazon roots in efs-utils.crt).
func TestEUSCSectionHasItsCA(t *testing.T) {
	b, err := Render(ConfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := sectionText(string(b), "mount.eusc-de-east-1")
	for _, want := range []string{"\ndns_name_suffix = amazonaws.eu\n", "\nstunnel_cafile = /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("[mount.eusc-de-east-1] lacks %q:\n%s", want, got)
		}
	}
}

// sectionText is the text of [name] up to the next section header, starting with a newline.
func sectionText(conf, name string) string {
	_, rest, ok := strings.Cut(conf, "\n["+name+"]")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n["); i >= 0 {
		rest = rest[:i+1]
	}
	return rest
}
