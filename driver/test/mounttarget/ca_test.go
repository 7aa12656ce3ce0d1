package mounttarget

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthorityReused: a second LoadOrCreateAuthority in the same directory signs with the same CA, and the
// server certificate verifies for its DNS names and addresses against the CA file.
func TestAuthorityReused(t *testing.T) {
	caDir, a1Dir, a2Dir := t.TempDir(), t.TempDir(), t.TempDir()
	a1, err := LoadOrCreateAuthority(caDir)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := LoadOrCreateAuthority(caDir)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := a1.Issue(a1Dir, []string{DNSName("fs-1", "us-east-1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := a2.Issue(a2Dir, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(filepath.Join(caDir, "ca.pem"))
	pool.AppendCertsFromPEM(caPEM)
	for _, c := range []struct {
		file, name string
	}{{c1.CertFile, "fs-1.efs.us-east-1.amazonaws.com"}, {c2.CertFile, "127.0.0.1"}, {c2.CertFile, "localhost"}} {
		b, _ := os.ReadFile(c.file)
		blk, _ := pem.Decode(b)
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: c.name}); err != nil {
			t.Fatalf("%s for %s: %v", c.file, c.name, err)
		}
	}
	if st, _ := os.Stat(filepath.Join(caDir, "ca.key")); st.Mode().Perm() != 0o600 {
		t.Fatalf("ca.key mode %v", st.Mode())
	}
	if err := os.Remove(filepath.Join(caDir, "ca.key")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateAuthority(caDir); err == nil || !strings.Contains(err.Error(), "both") {
		t.Fatalf("CA without key: %v", err)
	}
}
