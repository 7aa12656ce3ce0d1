package driver

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"k8s.io/klog/v2"
)

// DriverName is the CSI plugin name.
const DriverName = "efs.csi.aws.com"

// ReadyCheck reports why a part of the driver cannot serve yet, or nil.
type ReadyCheck func(ctx context.Context) error

// Identity is the CSI identity service.
type Identity struct {
	csi.UnimplementedIdentityServer
	version    string
	controller bool
	checks     []ReadyCheck
}

// NewIdentity returns the identity service; controller says whether the controller service is served, checks
// decide Probe.
func NewIdentity(version string, controller bool, checks ...ReadyCheck) *Identity {
	return &Identity{version: version, controller: controller, checks: checks}
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

// Probe runs the readiness checks: ready only when all pass.
func (i *Identity) Probe(ctx context.Context, _ *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	for _, check := range i.checks {
		if err := check(ctx); err != nil {
			klog.V(2).InfoS("Probe: not ready", "reason", err.Error())
			return &csi.ProbeResponse{Ready: wrapperspb.Bool(false)}, nil
		}
	}
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}
