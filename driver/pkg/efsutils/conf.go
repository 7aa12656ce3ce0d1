package efsutils

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidConf is wrapped by errors about efs-utils.conf settings and overrides.
var ErrInvalidConf = errors.New("invalid efs-utils configuration")

// Port range of TLS relays (efs-utils 1.36 defaults; the upper bound is exclusive).
const (
	PortRangeLowerBound        = 20049
	DefaultPortRangeUpperBound = 21049
)

// ConfOptions are the driver's settings rendered into efs-utils.conf.
type ConfOptions struct {
	// Region is written as [mount] region; empty leaves efs-utils to ask instance metadata.
	Region string
	// FIPS turns on fips_mode_enabled (stunnel fips = yes, FIPS endpoints for the fallback).
	FIPS bool
	// PortRangeUpperBound is the exclusive upper bound of TLS relay ports; 0 means 21049.
	PortRangeUpperBound int
	// Debug logs efs-utils at DEBUG and turns on stunnel debug logs.
	Debug bool
	// ClientSource is [client-info] source, carried in every client certificate.
	ClientSource string
	// CloudWatchLogs is [cloudwatch-log] enabled.
	CloudWatchLogs bool
	// Overrides are applied last (--efs-utils-conf-overrides).
	Overrides []Override
}

// Override sets one key of efs-utils.conf: section:key=value.
type Override struct{ Section, Key, Value string }

// String gives the section:key=value form ParseOverrides reads.
func (o Override) String() string { return o.Section + ":" + o.Key + "=" + o.Value }

// ParseOverrides parses "section:key=value[,section:key=value…]" (the --efs-utils-conf-overrides form) and checks
// every key against the rendered configuration, so that a typo fails at start-up instead of being ignored.
func ParseOverrides(s string) ([]Override, error) {
	var out []Override
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		section, rest, ok1 := strings.Cut(item, ":")
		key, value, ok2 := strings.Cut(rest, "=")
		section, key, value = strings.TrimSpace(section), strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok1 || !ok2 || section == "" || key == "" || strings.ContainsAny(item, "\n\r") {
			return nil, fmt.Errorf("%w: override %q: want section:key=value, such as mount:port_range_upper_bound=21449", ErrInvalidConf, item)
		}
		o := Override{Section: section, Key: key, Value: value}
		if err := known(o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// entry is one line of a section: an active key, or a commented-out key that an override may activate.
type entry struct {
	key, value string
	commented  bool
}

type section struct {
	name    string
	entries []entry
}

func kv(k, v string) entry { return entry{key: k, value: v} }

// template is efs-utils.conf as the driver renders it, before settings and overrides: the 1.36 keys, the
// driver's choices (DNS fallback on, IMDSv2, NFS retries) and the regional sections.
func template(o ConfOptions) []section {
	level, debug := "INFO", "false"
	if o.Debug {
		level, debug = "DEBUG", "true"
	}
	upper := o.PortRangeUpperBound
	if upper == 0 {
		upper = DefaultPortRangeUpperBound
	}
	region := entry{key: "region", value: o.Region, commented: o.Region == ""}
	if region.commented {
		region.value = "us-east-1"
	}
	mount := []entry{
		kv("dns_name_format", "{az}.{fs_id}.efs.{region}.{dns_name_suffix}"), kv("dns_name_suffix", "amazonaws.com"), region,
		kv("stunnel_debug_enabled", debug), {key: "stunnel_logs_file", value: "/var/log/amazon/efs/{fs_id}.stunnel.log", commented: true},
		kv("stunnel_cafile", "/etc/amazon/efs/efs-utils.crt"), kv("stunnel_check_cert_hostname", "true"),
		kv("stunnel_check_cert_validity", "false"), kv("fips_mode_enabled", strconv.FormatBool(o.FIPS)),
		kv("port_range_lower_bound", strconv.Itoa(PortRangeLowerBound)), kv("port_range_upper_bound", strconv.Itoa(upper)),
		kv("optimize_readahead", "true"), kv("fall_back_to_mount_target_ip_address_enabled", "true"),
		kv("disable_fetch_ec2_metadata_token", "false"), kv("retry_nfs_mount_command", "true"),
		kv("retry_nfs_mount_command_count", "3"), kv("retry_nfs_mount_command_timeout_sec", "15"),
	}
	out := []section{
		{name: "DEFAULT", entries: []entry{kv("logging_level", level), kv("logging_max_bytes", "1048576"),
			kv("logging_file_count", "10"), kv("state_file_dir_mode", "750")}},
		{name: "mount", entries: mount},
	}
	for _, r := range regional {
		es := []entry{kv("dns_name_suffix", r.suffix)}
		if r.caFile != "" {
			es = append(es, kv("stunnel_cafile", r.caFile))
		}
		out = append(out, section{name: "mount." + r.region, entries: es})
	}
	return append(out,
		section{name: "mount-watchdog", entries: []entry{kv("enabled", "true"), kv("poll_interval_sec", "1"),
			kv("unmount_count_for_consistency", "5"), kv("unmount_grace_period_sec", "30"), kv("tls_cert_renewal_interval_min", "60"),
			kv("stunnel_health_check_enabled", "true"), kv("stunnel_health_check_interval_min", "5"),
			kv("stunnel_health_check_command_timeout_sec", "30")}},
		section{name: "cloudwatch-log", entries: []entry{kv("enabled", strconv.FormatBool(o.CloudWatchLogs)),
			kv("log_group_name", "/aws/efs/utils"), kv("retention_in_days", "14")}},
		section{name: "client-info", entries: []entry{{key: "source", value: cmp.Or(o.ClientSource, "k8s"), commented: o.ClientSource == ""}}},
	)
}

const isoCA = "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"

// regional are the partitions whose DNS suffix (and CA bundle) differ from amazonaws.com.
var regional = []struct{ region, suffix, caFile string }{
	{"cn-north-1", "amazonaws.com.cn", ""}, {"cn-northwest-1", "amazonaws.com.cn", ""},
	{"us-iso-east-1", "c2s.ic.gov", isoCA}, {"us-iso-west-1", "c2s.ic.gov", isoCA},
	{"us-isob-east-1", "sc2s.sgov.gov", isoCA}, {"us-isob-west-1", "sc2s.sgov.gov", isoCA},
	{"us-isof-south-1", "csp.hci.ic.gov", isoCA}, {"us-isof-east-1", "csp.hci.ic.gov", isoCA},
	{"eu-isoe-west-1", "cloud.adc-e.uk", isoCA}, {"eusc-de-east-1", "amazonaws.eu", isoCA},
}

// known checks that an override names a section and key of the template.
func known(o Override) error {
	secs := template(ConfOptions{})
	i := slices.IndexFunc(secs, func(s section) bool { return s.name == o.Section })
	if i < 0 {
		names := make([]string, len(secs))
		for j, s := range secs {
			names[j] = s.name
		}
		return fmt.Errorf("%w: override %s: efs-utils.conf has no section [%s]: want one of %s", ErrInvalidConf, o, o.Section, strings.Join(names, ", "))
	}
	keys := make([]string, len(secs[i].entries))
	for j, e := range secs[i].entries {
		if e.key == o.Key {
			return nil
		}
		keys[j] = e.key
	}
	return fmt.Errorf("%w: override %s: section [%s] has no key %q: want one of %s", ErrInvalidConf, o, o.Section, o.Key, strings.Join(keys, ", "))
}

// Render returns efs-utils.conf for o, overrides applied (an override activates a commented-out key).
func Render(o ConfOptions) ([]byte, error) {
	if o.PortRangeUpperBound != 0 && o.PortRangeUpperBound < DefaultPortRangeUpperBound {
		return nil, fmt.Errorf("%w: port range upper bound %d: want at least %d", ErrInvalidConf, o.PortRangeUpperBound, DefaultPortRangeUpperBound)
	}
	secs := template(o)
	for _, ov := range o.Overrides {
		if err := known(ov); err != nil {
			return nil, err
		}
		for i := range secs {
			for j := range secs[i].entries {
				if secs[i].name == ov.Section && secs[i].entries[j].key == ov.Key {
					secs[i].entries[j] = kv(ov.Key, ov.Value)
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("# Rendered by the EFS CSI driver at start-up; changes are overwritten. Use --efs-utils-conf-overrides.\n")
	for _, s := range secs {
		fmt.Fprintf(&b, "\n[%s]\n", s.name)
		for _, e := range s.entries {
			if e.commented {
				b.WriteString("#")
			}
			fmt.Fprintf(&b, "%s = %s\n", e.key, e.value)
		}
	}
	return []byte(b.String()), nil
}
