package driver

import (
	"errors"
	"fmt"
	"slices"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// errInvalidRequest is wrapped by request validation errors (InvalidArgument).
var errInvalidRequest = errors.New("invalid request")

// supportedAccessModes: EFS is a shared file system, so every mode can be served; upstream accepted only the
// first two.
var supportedAccessModes = []csi.VolumeCapability_AccessMode_Mode{
	csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
	csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER,
	csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER,
}

// supportedFSTypes are the fsType values of a mount capability the driver accepts.
var supportedFSTypes = []string{"", "efs"}

// checkCapabilities validates volume capabilities: mount access only, a supported access mode and fsType, and no
// crossaccount mount flag (the provisioner secret selects cross-account mounts).
func checkCapabilities(caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return fmt.Errorf("%w: volume capabilities are missing: want at least one mount capability", errInvalidRequest)
	}
	for _, c := range caps {
		if c.GetBlock() != nil {
			return fmt.Errorf("%w: block access is not supported: want a mount capability", errInvalidRequest)
		}
		mount := c.GetMount()
		if mount == nil {
			return fmt.Errorf("%w: capability has no access type: want a mount capability", errInvalidRequest)
		}
		if !slices.Contains(supportedFSTypes, mount.GetFsType()) {
			return fmt.Errorf("%w: fsType %q: want \"\" or \"efs\"", errInvalidRequest, mount.GetFsType())
		}
		for _, f := range mount.GetMountFlags() {
			if f == "crossaccount" {
				return fmt.Errorf("%w: mount option crossaccount: set crossaccount in the provisioner secret instead", errInvalidRequest)
			}
		}
		mode := c.GetAccessMode().GetMode()
		if !slices.Contains(supportedAccessModes, mode) {
			return fmt.Errorf("%w: access mode %s: want one of %v", errInvalidRequest, mode, supportedAccessModes)
		}
	}
	return nil
}
