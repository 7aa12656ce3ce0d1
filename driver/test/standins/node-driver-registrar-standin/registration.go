package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// supportedVersions are the registration API versions offered to the kubelet, as the real registrar offers.
var supportedVersions = []string{"1.0.0"}

// registrationServer answers the kubelet's plugin watcher on the registration socket: GetInfo tells it which CSI
// driver listens where; NotifyRegistrationStatus reports the outcome.
type registrationServer struct {
	registerapi.UnimplementedRegistrationServer
	driverName string
	endpoint   string
	// failed receives the kubelet's error when it could not register the driver.
	failed chan<- string
}

var _ registerapi.RegistrationServer = (*registrationServer)(nil)

// GetInfo returns the plugin type, the driver's name and its socket on the host.
func (s *registrationServer) GetInfo(_ context.Context, _ *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	klog.V(4).InfoS("GetInfo", "driverName", s.driverName, "endpoint", s.endpoint)
	return &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: s.driverName, Endpoint: s.endpoint,
		SupportedVersions: supportedVersions}, nil
}

// NotifyRegistrationStatus logs the kubelet's verdict. A failure ends the process non-zero once the response is
// sent (the real registrar exits 1 at once), so that the container restarts and registers again.
func (s *registrationServer) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if st.GetPluginRegistered() {
		klog.InfoS("The kubelet registered the driver", "driverName", s.driverName, "endpoint", s.endpoint)
		return &registerapi.RegistrationStatusResponse{}, nil
	}
	klog.ErrorS(errors.New(st.GetError()), "The kubelet failed to register the driver; exiting", "driverName", s.driverName)
	select {
	case s.failed <- st.GetError():
	default: // already failing
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// listenRegistration replaces a stale registration socket and listens on path, readable by the owner only.
func listenRegistration(path string) (net.Listener, error) {
	switch fi, err := os.Lstat(path); {
	case err == nil && fi.Mode()&os.ModeSocket == 0:
		return nil, fmt.Errorf("registration socket %s: a %s is in the way, want a socket or nothing", path, fi.Mode().Type())
	case err == nil:
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale registration socket: %w", err)
		}
	case !os.IsNotExist(err):
		return nil, fmt.Errorf("registration socket: %w", err)
	}
	// umask, not a chmod afterwards: the socket must never be reachable by others, even briefly. Nothing else in
	// this process creates files meanwhile.
	old := unix.Umask(0o077)
	l, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("registration socket: %w", err)
	}
	return l, nil
}
