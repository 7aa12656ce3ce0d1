package mounttarget

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
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

// WriteCA makes a CA valid for two days and a server certificate for the DNS names and IP addresses, and writes
// them to dir as ca.pem, server.pem and server.key (mode 0600). The first DNS name (or else the first address) is
// the certificate's common name.
func WriteCA(dir string, dnsNames []string, ips []net.IP) (CA, error) {
	if len(dnsNames) == 0 && len(ips) == 0 {
		return CA{}, fmt.Errorf("mounttarget: a server certificate needs at least one DNS name or IP address")
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return CA{}, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aws-efs-csi test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return CA{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return CA{}, err
	}
	cn := ""
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	} else {
		cn = ips[0].String()
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return CA{}, err
	}
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames,
		IPAddresses: ips, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return CA{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return CA{}, err
	}
	ca := CA{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server.key")}
	for path, block := range map[string]*pem.Block{ca.CAFile: {Type: "CERTIFICATE", Bytes: caDER},
		ca.CertFile: {Type: "CERTIFICATE", Bytes: srvDER}, ca.KeyFile: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return CA{}, fmt.Errorf("mounttarget: write %s: %w", path, err)
		}
	}
	return ca, nil
}
