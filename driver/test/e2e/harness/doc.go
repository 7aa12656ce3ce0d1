// Package harness sets up the real parts of the driver's end-to-end tests on one machine: our mount.efs as
// /sbin/mount.efs, a TLS mount target stand-in (real stunnel server with a test CA in front of an echo server),
// the mount.nfs4 recorder, and the driver binary serving CSI on a unix socket.
package harness
