package scparams

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxClientToken is EFS's limit on CreateAccessPoint ClientToken.
const maxClientToken = 64

// ClientToken is the EFS idempotency token of a CreateAccessPoint call.
//
// Without reuseAccessPoint it is the CSI volume name (pvc-<uid>), hashed when longer than 64 characters. With
// reuseAccessPoint it names the claim, not the volume, so that another cluster with the same claim finds the same
// access point: sha256 of the file system ID, PVC namespace and PVC name (TokenNamespaced), or upstream's
// sha256 of the PVC name alone (TokenUpstream), which collides across namespaces and file systems.
func ClientToken(p Params, fileSystemID, volumeName string) string {
	if !p.ReuseAccessPoint {
		if len(volumeName) <= maxClientToken {
			return volumeName
		}
		return hashHex(volumeName)
	}
	if p.ReuseTokenFormat == TokenUpstream {
		return hashHex(p.PVCName)
	}
	return hashHex("efs-csi-reuse\x00" + fileSystemID + "\x00" + p.PVCNamespace + "\x00" + p.PVCName)
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// UpstreamToken is the upstream driver's client token of a reuseAccessPoint claim: sha256 of the PVC name.
func UpstreamToken(pvcName string) string { return hashHex(pvcName) }
