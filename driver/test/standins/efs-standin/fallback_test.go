package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBotocoreFallbackOverHTTPS: without mounttargetip and with no DNS for the mount target name, mount.efs
// finds the mount target through botocore (DescribeMountTargets, DescribeAvailabilityZones) at the stand-in's
// HTTPS endpoint (the path the cluster's pods take, with the endpoint from the Infrastructure's
// serviceEndpoints), trusting the test CA either through AWS_CA_BUNDLE or as the system trust store
// (SSL_CERT_FILE standing in for the cluster's CA bundle that the operator mounts over
// /etc/pki/ca-trust/extracted/pem, which botocore from its wheel would not read by itself).
func TestBotocoreFallbackOverHTTPS(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	// This machine's environment may name a CA bundle of its own; each row sets the one trust it tests.
	base := slices.DeleteFunc(slices.Clone(w.env), func(kv string) bool {
		return strings.HasPrefix(kv, "AWS_CA_BUNDLE=") || strings.HasPrefix(kv, "SSL_CERT_FILE=")
	})
	base = append(base, "AWS_ENDPOINT_URL_EFS="+w.ready.AWSEndpoint, "AWS_ENDPOINT_URL_EC2="+w.ready.AWSEndpoint,
		"AWS_ACCESS_KEY_ID=AKIDSTANDIN", "AWS_SECRET_ACCESS_KEY=secret")
	for _, row := range []struct{ name, fsID, opts, trust string }{
		{"one zone", w.ready.OneZoneFileSystemID, "tls", "AWS_CA_BUNDLE"},
		{"regional in a zone", w.ready.RegionalFileSystemID, "tls,az=us-east-1b", "AWS_CA_BUNDLE"},
		{"regional, no zone", w.ready.RegionalFileSystemID, "tls", "AWS_CA_BUNDLE"},
		{"one zone, system trust store", w.ready.OneZoneFileSystemID, "tls", "SSL_CERT_FILE"},
	} {
		t.Run(row.name, func(t *testing.T) {
			w.env = append(slices.Clip(base), row.trust+"="+w.ready.CAFile)
			fs := w.fs(t, row.fsID)
			target := filepath.Join(w.dir, "fallback-"+strings.ReplaceAll(strings.ReplaceAll(row.name, " ", "-"), ",", ""))
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(fs.BackingDir, "marker"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			before := w.calls(t)["DescribeMountTargets"]
			out, err := exec(t, w.env, "mount", "-t", "efs", "-o", row.opts, fs.ID+":/", target)
			if err != nil {
				t.Fatalf("mount: %v\n%s\n%s", err, out, w.proc.Logs())
			}
			if w.calls(t)["DescribeMountTargets"] <= before {
				t.Fatal("mounted without asking fakeaws for the mount target")
			}
			if _, err := os.Stat(filepath.Join(target, "marker")); err != nil {
				t.Fatalf("mount does not show the file system: %v", err)
			}
		})
	}
}
