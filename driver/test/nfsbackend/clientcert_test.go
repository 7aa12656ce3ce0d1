package nfsbackend

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// clientCert makes a certificate with the EFS extensions efs-utils writes (values as DER UTF8String).
func clientCert(t *testing.T, exts map[string]string) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "node-1"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	oids := map[string]asn1.ObjectIdentifier{"ap": oidAccessPoint, "fs": oidFileSystemID}
	for k, v := range exts {
		val, err := asn1.MarshalWithParams(v, "utf8")
		if err != nil {
			t.Fatal(err)
		}
		if k == "bad-fs" {
			val, k = []byte{0x02, 0x01, 0x01}, "fs" // an INTEGER, not a UTF8String
		}
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: oids[k], Value: val})
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestParseClientCertificate(t *testing.T) {
	rows := []struct {
		name    string
		pem     []byte
		want    ClientIdentity
		wantErr string
	}{
		{"access point", clientCert(t, map[string]string{"fs": "fs-1", "ap": "fsap-2"}), ClientIdentity{"fs-1", "fsap-2"}, ""},
		{"file system only", clientCert(t, map[string]string{"fs": "fs-1"}), ClientIdentity{FileSystemID: "fs-1"}, ""},
		{"no file system", clientCert(t, map[string]string{"ap": "fsap-2"}), ClientIdentity{}, "no file system ID"},
		{"not a string", clientCert(t, map[string]string{"bad-fs": ""}), ClientIdentity{}, "UTF8String"},
		{"not PEM", []byte("hello"), ClientIdentity{}, "PEM"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			got, err := ParseClientCertificate(row.pem)
			if row.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), row.wantErr) {
					t.Fatalf("err = %v, want %q", err, row.wantErr)
				}
				return
			}
			if err != nil || got != row.want {
				t.Fatalf("ParseClientCertificate = %+v, %v; want %+v", got, err, row.want)
			}
		})
	}
}
