package nfsbackend

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// maxMessage bounds one protocol message (a certificate is about 2 KiB).
const maxMessage = 64 << 10

// Request is what the mount.nfs4 stand-in sends through the relay: one JSON line.
type Request struct {
	// Export is the path mount.nfs4 was asked for (the part after "host:" of its source), relative to the access
	// point's root directory, or to the file system root without an access point.
	Export string `json:"export"`
	// Target is the mount point as the caller sees it, absolute.
	Target string `json:"target"`
	// Source and Options are mount.nfs4's source and -o options, written into the NFS mount table.
	Source  string `json:"source"`
	Options string `json:"options"`
	// MountNamespace is the inode of the caller's /proc/self/ns/mnt: where the directory is mounted.
	MountNamespace uint64 `json:"mountNamespace"`
	// MountTable is EFS_UTILS_PROC_MOUNTS of the caller (absolute, in its namespace), or "" when it has none.
	MountTable string `json:"mountTable,omitempty"`
	// Certificate is the PEM client certificate efs-utils made for this mount and gave its stunnel client
	// (from the mount's efs-utils state), or "" when there is none (no TLS state found).
	Certificate string `json:"certificate,omitempty"`
	// Resolve asks only for the directory that would be served (an access point's missing root is created, as by a
	// mount), so that the client can look at it over NFS before it asks for the mount; nothing is mounted.
	Resolve bool `json:"resolve,omitempty"`
}

// Response is the backend's answer: one JSON line; Error is empty on success.
type Response struct {
	Error string `json:"error,omitempty"`
	// Served is the directory mounted, relative to the file system root (for logs and tests).
	Served string `json:"served,omitempty"`
	// NFSPath is the served directory's path on the real NFS server behind the mount target (Server.NFSServer),
	// "" when there is none.
	NFSPath string `json:"nfsPath,omitempty"`
}

// Validate checks the fields the backend relies on.
func (r Request) Validate() error {
	switch {
	case !strings.HasPrefix(r.Export, "/"):
		return fmt.Errorf("export %q: want an absolute path such as / or /dir", r.Export)
	case !path.IsAbs(r.Target) || path.Clean(r.Target) != r.Target:
		return fmt.Errorf("target %q: want a clean absolute path", r.Target)
	case r.MountNamespace == 0:
		return errors.New("mountNamespace: want the inode of /proc/self/ns/mnt")
	case r.MountTable != "" && (!path.IsAbs(r.MountTable) || path.Clean(r.MountTable) != r.MountTable):
		return fmt.Errorf("mountTable %q: want a clean absolute path or nothing", r.MountTable)
	}
	return nil
}

// WriteMessage writes v as one JSON line.
func WriteMessage(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadMessage reads one JSON line into v.
func ReadMessage(r *bufio.Reader, v any) error {
	var line []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return err
		}
		line = append(line, chunk...)
		if len(line) > maxMessage {
			return fmt.Errorf("message longer than %d bytes", maxMessage)
		}
		if !isPrefix {
			break
		}
	}
	return json.Unmarshal(line, v)
}
