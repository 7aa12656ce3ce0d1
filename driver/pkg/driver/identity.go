package driver

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// DriverName is the CSI plugin name.
const DriverName = "efs.csi.aws.com"

// Identity is the CSI identity service.
type Identity struct {
	csi.UnimplementedIdentityServer
	version    string
	controller bool
}

// NewIdentity returns the identity service; controller says whether the controller service is served.
func NewIdentity(version string, controller bool) *Identity {
	return &Identity{version: version, controller: controller}
}

// GetPluginInfo returns efs.csi.aws.com and the driver version.
func (i *Identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: DriverName, VendorVersion: i.version}, nil
}

// GetPluginCapabilities advertises the controller service (when served) and topology.
func (i *Identity) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	service := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: t}}}
	}
	caps := []*csi.PluginCapability{service(csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS)}
	if i.controller {
		caps = append(caps, service(csi.PluginCapability_Service_CONTROLLER_SERVICE))
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: caps}, nil
}

// Probe answers ready whenever the process serves gRPC, as upstream's does. The livenessprobe sidecar turns
// not-ready into a container restart, and a restart of the node plugin kills every TLS relay on the node, so
// degraded dependencies (AWS credentials, the efs-utils watchdog, the node's identity) are reported by package
// health in metrics and the log, and by the RPCs that need them as errors, never here.
func (i *Identity) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}
