// Command mount-nfs4-standin stands in for /sbin/mount.nfs4 in the local test cluster's driver image and in the
// data-path tests, because this kernel has no NFS client. It is a test-only stand-in, never shipped.
//
// efs-utils' mount.efs runs it as `mount.nfs4 127.0.0.1:/path TARGET -o ...,port=N,...` after starting its TLS
// relay on port N. The stand-in connects to 127.0.0.1:N, so everything it asks goes through the relay, the
// mount target's TLS server and on to the NFS server stand-in (package nfsbackend), which mounts the file
// system's (or the access point's) directory at TARGET in this process's mount namespace and adds the line the
// kernel would show for an NFS mount to the table at $EFS_UTILS_PROC_MOUNTS. It sends the mount's client
// certificate, found through the efs-utils state file of port N, which is how the server learns the access point.
// Exit codes are mount.nfs4's: 0 mounted, 32 failure (with "reset by peer" in the message when the relay does not
// carry the request, which efs-utils retries), 1 usage.
package main

import (
	"fmt"
	"os"
)

func main() {
	code, err := run(os.Args[1:], os.Environ())
	if err != nil {
		fmt.Fprintln(os.Stderr, "mount.nfs4:", err)
	}
	os.Exit(code)
}
