package sanity

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// cleanupNode answers the two node RPCs csi-sanity's resource cleanup makes after every controller spec
// (NodeGetCapabilities, NodeUnpublishVolume of a target it never published) in the in-process suite, which serves
// the controller alone; TestCSISanityBinary runs a real node-mode process instead.
type cleanupNode struct {
	csi.UnimplementedNodeServer
}

func (cleanupNode) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

func (cleanupNode) NodeUnpublishVolume(context.Context, *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	return &csi.NodeUnpublishVolumeResponse{}, nil
}
