package harness

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// SanityIDs makes IDs in the driver's forms for volumes and nodes that do not exist, for csi-sanity's
// IDGenerator. FileSystemID is the file system the made-up access points claim to live on.
type SanityIDs struct{ FileSystemID string }

// GenerateUniqueValidVolumeID returns a well-formed handle of an access point that does not exist.
func (g SanityIDs) GenerateUniqueValidVolumeID() string {
	return g.FileSystemID + "::fsap-" + randomHex(17)
}

// GenerateInvalidVolumeID returns a handle the driver cannot parse.
func (g SanityIDs) GenerateInvalidVolumeID() string { return "fs-notavolume" }

// GenerateUniqueValidNodeID returns a well-formed EC2 instance ID.
func (g SanityIDs) GenerateUniqueValidNodeID() string { return "i-" + randomHex(17) }

// GenerateInvalidNodeID returns a node ID in no valid form.
func (g SanityIDs) GenerateInvalidNodeID() string { return "not-a-node" }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// SyncBuffer is a bytes.Buffer that a child process's output copier and the test can share.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Tail returns the last n bytes of s, for quoting long logs in failure messages.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
