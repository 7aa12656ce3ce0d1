// Package mounttarget stands in for the TLS side of EFS mount targets on one machine: a test CA with server
// certificates for the mount target DNS names efs-utils checks, free loopback addresses for port 2049, and a real
// stunnel server that terminates TLS on <address>:2049 and forwards the plain stream to a backend. The driver's
// e2e harness puts an echo server behind it; the data-path stand-in (package nfsbackend) puts its NFS server
// stand-in behind it.
package mounttarget
