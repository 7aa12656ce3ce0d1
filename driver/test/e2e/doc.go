// Package e2e runs the driver in node mode against real parts: its gRPC socket, real mount(8), our mount.efs,
// real stunnel to a TLS mount target stand-in, and a mount.nfs4 recorder that bind-mounts (no NFS client here).
package e2e
