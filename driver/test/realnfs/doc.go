// Package realnfs is the real NFS of the tests, where this machine allows it: Debian's nfs-ganesha as the server
// (packages nfs-ganesha and nfs-ganesha-vfs), exporting one directory read-only over NFSv4 on a loopback port,
// and libnfs' user-space client utilities (package libnfs-utils) as the client, since this kernel has no NFS
// client. Package nfsbackend relays the NFS connections that reach a test mount target to the server, and the
// mount.nfs4 stand-in lists the directory it mounts through efs-utils' TLS relay with the client, so that real NFS
// traffic crosses the relay and the mount target's TLS server.
//
// Only NFSv4 over TCP is served: no rpcbind, NLM, rquota or UDP, which a v4 client does not use. The export is
// read-only because the data path's writes go through the stand-in's bind mount, not through NFS.
package realnfs
