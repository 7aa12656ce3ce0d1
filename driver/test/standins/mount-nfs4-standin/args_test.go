package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	rows := []struct {
		name    string
		args    []string
		want    call
		wantErr string
	}{
		{"relay", []string{"127.0.0.1:/", "/mnt/a", "-o", "nfsvers=4.1,rsize=1048576,port=20123"},
			call{Source: "127.0.0.1:/", Target: "/mnt/a", Options: "nfsvers=4.1,rsize=1048576,port=20123", Host: "127.0.0.1", Export: "/", Port: 20123}, ""},
		{"flags and default port", []string{"-v", "10.0.0.1:/x/y", "/mnt/b/", "-o", "rw"},
			call{Source: "10.0.0.1:/x/y", Target: "/mnt/b", Options: "rw", Host: "10.0.0.1", Export: "/x/y", Port: 2049}, ""},
		{"one argument", []string{"127.0.0.1:/"}, call{}, "usage"},
		{"no path", []string{"127.0.0.1", "/mnt"}, call{}, "host:/path"},
		{"relative target", []string{"127.0.0.1:/", "mnt"}, call{}, "absolute"},
		{"bad port", []string{"127.0.0.1:/", "/mnt", "-o", "port=x"}, call{}, "port=x"},
		{"-o without value", []string{"127.0.0.1:/", "/mnt", "-o"}, call{}, "-o"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			got, err := parseArgs(row.args)
			if row.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), row.wantErr) {
					t.Fatalf("err = %v, want %q", err, row.wantErr)
				}
				return
			}
			if err != nil || got != row.want {
				t.Fatalf("parseArgs = %+v, %v; want %+v", got, err, row.want)
			}
		})
	}
}

// TestClientCertificate finds the certificate through the state file of the mount's relay port, in its
// temporary (~) form while mount.efs runs, and not the one of another port or mount point.
func TestClientCertificate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("cert-a.pem", "A")
	write("cert-b.pem", "B")
	write("~fs-1.var.lib.kubelet.pods.p.mount.20050", `{"certificate": "`+filepath.Join(dir, "cert-a.pem")+`"}`)
	write("fs-1.var.lib.kubelet.pods.p.mount.20051", `{"certificate": "`+filepath.Join(dir, "cert-b.pem")+`"}`)
	write("fs-1.other.20050", `{"certificate": "/nonexistent"}`)
	if got, err := clientCertificate(dir, "/var/lib/kubelet/pods/p/mount", 20050); err != nil || got != "A" {
		t.Fatalf("port 20050: %q, %v", got, err)
	}
	if got, err := clientCertificate(dir, "/var/lib/kubelet/pods/p/mount", 20051); err != nil || got != "B" {
		t.Fatalf("port 20051: %q, %v", got, err)
	}
	if _, err := clientCertificate(dir, "/var/lib/kubelet/pods/p/mount", 20052); err == nil || !strings.Contains(err.Error(), "20052") {
		t.Fatalf("no state file: %v", err)
	}
	if stateKey("/mnt/a", 2) != ".mnt.a.2" {
		t.Fatalf("stateKey = %q", stateKey("/mnt/a", 2))
	}
}

// TestRunWithoutRelay: with nothing listening on the relay port the stand-in fails as mount.nfs4 does when the
// connection is dropped (efs-utils retries on "reset by peer") and mounts nothing.
func TestRunWithoutRelay(t *testing.T) {
	target := t.TempDir()
	code, err := run([]string{"10.255.255.1:/", target, "-o", "port=1"}, []string{"EFS_UTILS_STATE_DIR=" + t.TempDir()})
	if code != exitFailure || err == nil || !strings.Contains(err.Error(), "reset by peer") {
		t.Fatalf("run = %d, %v", code, err)
	}
	if code, _ := run([]string{"x"}, nil); code != exitUsage {
		t.Fatalf("usage error exit %d, want %d", code, exitUsage)
	}
}
