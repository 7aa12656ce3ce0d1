package mounttarget

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// DNSName is the name of a file system's mount targets in region, the name efs-utils checks the server
// certificate against (stunnel checkHost; a leading zone label is dropped before the check).
func DNSName(fsID, region string) string { return fsID + ".efs." + region + ".amazonaws.com" }

// CA is a test certificate authority and one server certificate it signed, written as PEM files.
type CA struct {
	// CAFile is the CA certificate: the bundle clients verify the server with (efs-utils' stunnel_cafile, an
	// AWS SDK's or botocore's CA bundle).
	CAFile string
	// CertFile and KeyFile are the server certificate and its private key (PKCS #8).
	CertFile, KeyFile string
}

// Authority is a test CA that can sign server certificates.
type Authority struct {
	// CAFile is the CA certificate (PEM).
	CAFile string
	cert   *x509.Certificate
	key    crypto.Signer
}

// caValidity is how long a CA made here is valid: long enough to be reused across runs from a cache, while a
// server certificate lives one day.
const caValidity = 365 * 24 * time.Hour

// LoadOrCreateAuthority reads the CA in dir (ca.pem and ca.key), or creates one there (the key mode 0600) when
// neither exists, so that a CA baked into a test image earlier keeps signing the certificates of later runs.
func LoadOrCreateAuthority(dir string) (*Authority, error) {
	certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key")
	certPEM, cerr := os.ReadFile(certFile)
	keyPEM, kerr := os.ReadFile(keyFile)
	switch {
	case cerr == nil && kerr == nil:
		return parseAuthority(certFile, certPEM, keyPEM)
	case errors.Is(cerr, fs.ErrNotExist) && errors.Is(kerr, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("mounttarget: CA in %s: want both ca.pem and ca.key or neither (%v, %v)", dir, cerr, kerr)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "aws-efs-csi test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caValidity), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writePEM(keyFile, "PRIVATE KEY", keyDER); err != nil {
		return nil, err
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{CAFile: certFile, cert: cert, key: key}, nil
}

func parseAuthority(certFile string, certPEM, keyPEM []byte) (*Authority, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("mounttarget: CA %s: want PEM certificate and key", certFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("mounttarget: CA %s: %w", certFile, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("mounttarget: CA key of %s: %w", certFile, err)
	}
	key, ok := k.(crypto.Signer)
	if !ok || !cert.IsCA {
		return nil, fmt.Errorf("mounttarget: %s is not a CA with a signing key", certFile)
	}
	if time.Now().After(cert.NotAfter.Add(-48 * time.Hour)) {
		return nil, fmt.Errorf("mounttarget: CA %s expires %s: remove ca.pem and ca.key to make a new one", certFile, cert.NotAfter)
	}
	return &Authority{CAFile: certFile, cert: cert, key: key}, nil
}

// Issue makes a server certificate valid for one day for the DNS names and IP addresses and writes it to dir as
// server.pem and server.key (mode 0600). The first DNS name (or else the first address) is its common name.
func (a *Authority) Issue(dir string, dnsNames []string, ips []net.IP) (CA, error) {
	if len(dnsNames) == 0 && len(ips) == 0 {
		return CA{}, errors.New("mounttarget: a server certificate needs at least one DNS name or IP address")
	}
	cn := ""
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	} else {
		cn = ips[0].String()
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return CA{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames,
		IPAddresses: ips, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return CA{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return CA{}, err
	}
	ca := CA{CAFile: a.CAFile, CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server.key")}
	if err := writePEM(ca.CertFile, "CERTIFICATE", der); err != nil {
		return CA{}, err
	}
	if err := writePEM(ca.KeyFile, "PRIVATE KEY", keyDER); err != nil {
		return CA{}, err
	}
	return ca, nil
}

// WriteCA makes a new CA in dir (ca.pem, ca.key) and a server certificate it signed (server.pem, server.key).
func WriteCA(dir string, dnsNames []string, ips []net.IP) (CA, error) {
	a, err := LoadOrCreateAuthority(dir)
	if err != nil {
		return CA{}, err
	}
	return a.Issue(dir, dnsNames, ips)
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("mounttarget: write %s: %w", path, err)
	}
	return nil
}
