package cluster

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

// CA is the cluster's certificate authority: it signs the API server's serving certificate and every client
// certificate (admin, kubelet, controller-manager, scheduler, the API server's kubelet client), and clients trust it.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate.
	PEM []byte
}

func newCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "e2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Pair is a PEM certificate and its private key.
type Pair struct{ Cert, Key []byte }

// ClientCert issues a client certificate for user name in groups (the subject's CN and O, as the API server reads them).
func (ca *CA) ClientCert(name string, groups ...string) (Pair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: name, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// ServingCert issues a TLS server certificate for the given DNS names and IP addresses.
func (ca *CA) ServingCert(hosts ...string) (Pair, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issue(tmpl)
}

func (ca *CA) issue(tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = ca.cert.NotBefore, ca.cert.NotAfter
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, err
	}
	keyPEM, err := ecKeyPEM(key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Key: keyPEM}, nil
}

// Write stores the pair as <base>.crt and <base>.key and returns their paths.
func (p Pair) Write(base string) (certFile, keyFile string, err error) {
	certFile, keyFile = base+".crt", base+".key"
	if err := os.WriteFile(certFile, p.Cert, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, p.Key, 0o600)
}

// credentials are the files the API server needs.
type credentials struct {
	caFile, saKey, servingCert, servingKey, kubeletClientCert, kubeletClientKey string
	admin                                                                       Pair
}

// writeCredentials generates the CA, the API server's serving certificate and kubelet client certificate, an
// admin client certificate in group system:masters and a service-account signing key under dir.
func writeCredentials(dir string, ca *CA) (*credentials, error) {
	c := &credentials{caFile: filepath.Join(dir, "ca.crt"), saKey: filepath.Join(dir, "sa.key")}
	if err := os.WriteFile(c.caFile, ca.PEM, 0o600); err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saPEM, err := ecKeyPEM(saKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.saKey, saPEM, 0o600); err != nil {
		return nil, err
	}
	// In-cluster clients reach the API server as the kubernetes Service (its first address, 10.0.0.1) or by name.
	serving, err := ca.ServingCert("127.0.0.1", "localhost", "10.0.0.1", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	if err != nil {
		return nil, err
	}
	if c.servingCert, c.servingKey, err = serving.Write(filepath.Join(dir, "apiserver")); err != nil {
		return nil, err
	}
	kubeletClient, err := ca.ClientCert("kube-apiserver-kubelet-client", "system:masters")
	if err != nil {
		return nil, err
	}
	if c.kubeletClientCert, c.kubeletClientKey, err = kubeletClient.Write(filepath.Join(dir, "apiserver-kubelet-client")); err != nil {
		return nil, err
	}
	if c.admin, err = ca.ClientCert("e2e-admin", "system:masters"); err != nil {
		return nil, err
	}
	if _, _, err := c.admin.Write(filepath.Join(dir, "admin")); err != nil {
		return nil, err
	}
	return c, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // the kernel's random source does not fail
	}
	return n
}

func ecKeyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
