package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Region the tests mount in.
const Region = "us-east-1"

// DNSName is the mount target name efs-utils checks the server certificate against (checkHost).
func DNSName(fsID string) string { return fsID + ".efs." + Region + ".amazonaws.com" }

// CA writes a test CA and a server certificate for the given file systems' DNS names into dir; it returns the
// CA bundle path (efs-utils' stunnel_cafile) and the server's certificate and key paths.
func CA(t *testing.T, dir string, fsIDs ...string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	names := make([]string, len(fsIDs))
	for i, id := range fsIDs {
		names[i] = DNSName(id)
	}
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(srvKey)
	caFile, certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	for path, block := range map[string]*pem.Block{caFile: {Type: "CERTIFICATE", Bytes: caDER},
		certFile: {Type: "CERTIFICATE", Bytes: srvDER}, keyFile: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return caFile, certFile, keyFile
}

// MountTarget stands in for an EFS mount target: a stunnel TLS server on <IP>:2049 in front of an echo server
// ("NFS server") that answers the recorder's probe through the relay.
type MountTarget struct {
	IP string
}

// StartMountTarget starts the stand-in on a free 127.x.y.z (all of 127/8 is local on Linux) until the test ends.
func StartMountTarget(t *testing.T, dir, certFile, keyFile string) *MountTarget {
	t.Helper()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	ip := freeLoopback(t)
	conf := filepath.Join(dir, "target-stunnel.conf")
	body := fmt.Sprintf("foreground = yes\npid = %s/target-stunnel.pid\noutput = %s/target-stunnel.log\n\n[nfs]\naccept = %s:2049\nconnect = %s\ncert = %s\nkey = %s\n",
		dir, dir, ip, echo.Addr().String(), certFile, keyFile)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Stunnel, conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", ip+":2049", 200*time.Millisecond)
		if err == nil {
			c.Close()
			return &MountTarget{IP: ip}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "target-stunnel.log"))
			t.Fatalf("mount target stand-in did not listen on %s:2049: %v\n%s", ip, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	for i := 0; i < 100; i++ {
		b := make([]byte, 3)
		_, _ = rand.Read(b)
		ip := fmt.Sprintf("127.%d.%d.%d", 1+b[0]%250, b[1], 2+b[2]%250)
		l, err := net.Listen("tcp", ip+":2049")
		if err == nil {
			l.Close()
			return ip
		}
	}
	t.Fatal("no free loopback address for port 2049")
	return ""
}

// StartPlainTarget stands in for a mount target reached without TLS: an echo server on a free 127.x.y.z:2049,
// which efs-utils' reachability check and the recorder's probe talk to in plain text. It returns the address.
func StartPlainTarget(t *testing.T) string {
	t.Helper()
	ip := freeLoopback(t)
	l, err := net.Listen("tcp", ip+":2049")
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
	return ip
}
