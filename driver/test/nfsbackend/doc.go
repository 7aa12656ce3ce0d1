// Package nfsbackend is the NFS server stand-in behind the test mount targets: it serves each file system from a
// backing directory. The mount.nfs4 stand-in (test/standins/mount-nfs4-standin) speaks a small JSON protocol to it
// through efs-utils' TLS relay and the mount target's stunnel server; the backend works out the directory to
// serve (the access point's root, created on first mount with its CreationInfo, as EFS does), bind-mounts it at
// the target in the mount namespace of the caller (the node or controller container, or the host), and keeps the
// NFS mount table that efs-utils reads through EFS_UTILS_PROC_MOUNTS, since a bind mount does not show as nfs4 in
// the kernel's.
package nfsbackend
