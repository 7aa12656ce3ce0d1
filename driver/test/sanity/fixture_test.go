package sanity

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// cleanupNode answers the two node RPCs csi-sanity's resource cleanup makes after every controller spec
// (NodeGetCapabilities, NodeUnpublishVolume of a target it never published). It stands in for the node service,
// which a later change builds; the node specs themselves are skipped, and any other node RPC is Unimplemented.
type cleanupNode struct {
	csi.UnimplementedNodeServer
}

func (cleanupNode) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

func (cleanupNode) NodeUnpublishVolume(context.Context, *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// identityForwarder passes identity calls through to the driver process, so that csi-sanity's --csi.endpoint
// (which also carries the node calls of its cleanup) still tests the driver's own identity service.
type identityForwarder struct {
	csi.UnimplementedIdentityServer
	to csi.IdentityClient
}

func (f identityForwarder) GetPluginInfo(ctx context.Context, r *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return f.to.GetPluginInfo(ctx, r)
}

func (f identityForwarder) GetPluginCapabilities(ctx context.Context, r *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return f.to.GetPluginCapabilities(ctx, r)
}

func (f identityForwarder) Probe(ctx context.Context, r *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return f.to.Probe(ctx, r)
}
