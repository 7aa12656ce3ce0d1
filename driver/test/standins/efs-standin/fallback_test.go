package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBotocoreFallbackOverHTTPS: without mounttargetip and with no DNS for the mount target name, mount.efs
// finds the mount target through botocore (DescribeMountTargets, DescribeAvailabilityZones) at the stand-in's
// HTTPS endpoint, trusting the test CA through AWS_CA_BUNDLE: the path the cluster's pods take, with the endpoint
// from the Infrastructure's serviceEndpoints.
func TestBotocoreFallbackOverHTTPS(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	w.env = append(w.env, "AWS_ENDPOINT_URL_EFS="+w.ready.AWSEndpoint, "AWS_ENDPOINT_URL_EC2="+w.ready.AWSEndpoint,
		"AWS_CA_BUNDLE="+w.ready.CAFile, "AWS_ACCESS_KEY_ID=AKIDSTANDIN", "AWS_SECRET_ACCESS_KEY=secret")
	for _, row := range []struct{ name, fsID, opts string }{
		{"one zone", w.ready.OneZoneFileSystemID, "tls"},
		{"regional in a zone", w.ready.RegionalFileSystemID, "tls,az=us-east-1b"},
		{"regional, no zone", w.ready.RegionalFileSystemID, "tls"},
	} {
		t.Run(row.name, func(t *testing.T) {
			fs := w.fs(t, row.fsID)
			target := filepath.Join(w.dir, "fallback-"+strings.ReplaceAll(row.name, " ", "-"))
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
