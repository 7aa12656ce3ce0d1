package nfsbackend

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
)

// The EFS extensions of the client certificate efs-utils makes for each TLS mount (efs-utils/efs_utils/
// certificate.py): each value is a DER UTF8String.
var (
	oidAccessPoint  = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 4843, 7, 1}
	oidFileSystemID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 4843, 7, 3}
)

// ClientIdentity is what an EFS client certificate says about the mount.
type ClientIdentity struct {
	FileSystemID string
	// AccessPointID is "" for a mount without an access point.
	AccessPointID string
}

// ParseClientCertificate reads the file system and access point extensions of an efs-utils client certificate
// (PEM). The certificate's signature is not checked: it is self-signed by the node's key, as EFS accepts it.
func ParseClientCertificate(pemText []byte) (ClientIdentity, error) {
	block, _ := pem.Decode(pemText)
	if block == nil || block.Type != "CERTIFICATE" {
		return ClientIdentity{}, errors.New("client certificate: want one PEM CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return ClientIdentity{}, fmt.Errorf("client certificate: %w", err)
	}
	var id ClientIdentity
	for _, ext := range cert.Extensions {
		var dst *string
		switch {
		case ext.Id.Equal(oidAccessPoint):
			dst = &id.AccessPointID
		case ext.Id.Equal(oidFileSystemID):
			dst = &id.FileSystemID
		default:
			continue
		}
		var s string
		rest, err := asn1.UnmarshalWithParams(ext.Value, &s, "utf8")
		if err != nil || len(rest) > 0 {
			return ClientIdentity{}, fmt.Errorf("client certificate extension %s: want a DER UTF8String", ext.Id)
		}
		*dst = s
	}
	if id.FileSystemID == "" {
		return ClientIdentity{}, fmt.Errorf("client certificate: no file system ID extension %s", oidFileSystemID)
	}
	return id, nil
}
