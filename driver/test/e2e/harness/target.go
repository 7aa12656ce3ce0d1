package harness

import (
	"io"
	"net"
	"testing"

	"github.com/openshift/aws-efs-csi/driver/test/mounttarget"
)

// Region the tests mount in.
const Region = "us-east-1"

// DNSName is the mount target name efs-utils checks the server certificate against (checkHost).
func DNSName(fsID string) string { return mounttarget.DNSName(fsID, Region) }

// CA writes a test CA and a server certificate for the given file systems' DNS names into dir; it returns the
// CA bundle path (efs-utils' stunnel_cafile) and the server's certificate and key paths.
func CA(t *testing.T, dir string, fsIDs ...string) (caFile, certFile, keyFile string) {
	t.Helper()
	names := make([]string, len(fsIDs))
	for i, id := range fsIDs {
		names[i] = DNSName(id)
	}
	ca, err := mounttarget.WriteCA(dir, names, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ca.CAFile, ca.CertFile, ca.KeyFile
}

// MountTarget stands in for an EFS mount target: a stunnel TLS server on <IP>:2049 in front of an echo server
// ("NFS server") that answers the recorder's probe through the relay.
type MountTarget struct {
	IP string
}

// StartMountTarget starts the stand-in on a free 127.x.y.z (all of 127/8 is local on Linux) until the test ends.
func StartMountTarget(t *testing.T, dir, certFile, keyFile string) *MountTarget {
	t.Helper()
	echo := startEcho(t, "127.0.0.1:0")
	ip := freeLoopback(t)
	st, err := mounttarget.StartStunnel(dir, mounttarget.CA{CertFile: certFile, KeyFile: keyFile},
		[]mounttarget.Service{{Name: "nfs", Accept: net.JoinHostPort(ip, "2049"), Connect: echo}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	return &MountTarget{IP: ip}
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	ip, err := mounttarget.FreeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	return ip
}

// startEcho serves an echo server on addr until the test ends and returns its address.
func startEcho(t *testing.T, addr string) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return l.Addr().String()
}

// StartPlainTarget stands in for a mount target reached without TLS: an echo server on a free 127.x.y.z:2049,
// which efs-utils' reachability check and the recorder's probe talk to in plain text. It returns the address.
func StartPlainTarget(t *testing.T) string {
	t.Helper()
	ip := freeLoopback(t)
	startEcho(t, net.JoinHostPort(ip, "2049"))
	return ip
}
