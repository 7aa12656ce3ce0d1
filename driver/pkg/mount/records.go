package mount

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Record is what the node remembers about one publish: the volume and the exact mount at a target path. It is
// written before the mount and removed after the unmount, so that a retried or repeated publish can tell "the
// same volume, already mounted" (OK) from "another volume" (AlreadyExists) without parsing NFS mount options.
type Record struct {
	VolumeID string   `json:"volumeID"`
	Target   string   `json:"target"`
	Source   string   `json:"source"`
	FSType   string   `json:"fsType"`
	Options  []string `json:"options"`
	// SingleWriter is set for SINGLE_NODE_SINGLE_WRITER publishes: no other target on the node may have the volume.
	SingleWriter bool `json:"singleWriter,omitempty"`
}

func (r Record) spec() Spec { return Spec{Source: r.Source, FSType: r.FSType, Options: r.Options} }

// Records keeps one JSON file per target path in a directory (a hostPath, so it outlives the driver pod).
type Records struct{ dir string }

// NewRecords returns the records kept in dir, creating it.
func NewRecords(dir string) (*Records, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("publish records directory %s: %w", dir, err)
	}
	return &Records{dir: dir}, nil
}

func (r *Records) file(target string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(target)))
	return filepath.Join(r.dir, hex.EncodeToString(sum[:16])+".json")
}

// Get returns the record of target; ok is false when there is none.
func (r *Records) Get(target string) (rec Record, ok bool, err error) {
	b, err := os.ReadFile(r.file(target))
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("read publish record of %s: %w", target, err)
	}
	if err := json.Unmarshal(b, &rec); err != nil || filepath.Clean(rec.Target) != filepath.Clean(target) {
		// A torn or foreign file says nothing about this target: treat it as absent (it is rewritten on publish).
		return Record{}, false, nil
	}
	return rec, true, nil
}

// Put writes the record of rec.Target atomically (temporary file, fsync, rename).
func (r *Records) Put(rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	dst := r.file(rec.Target)
	tmp, err := os.CreateTemp(r.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("write publish record of %s: %w", rec.Target, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write publish record of %s: %w", rec.Target, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write publish record of %s: %w", rec.Target, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write publish record of %s: %w", rec.Target, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("write publish record of %s: %w", rec.Target, err)
	}
	return nil
}

// Delete removes the record of target; a missing record is not an error.
func (r *Records) Delete(target string) error {
	if err := os.Remove(r.file(target)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove publish record of %s: %w", target, err)
	}
	return nil
}

// List returns every record.
func (r *Records) List() ([]Record, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("list publish records: %w", err)
	}
	var out []Record
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r.dir, e.Name()))
		if err != nil {
			continue
		}
		var rec Record
		if json.Unmarshal(b, &rec) == nil && rec.Target != "" {
			out = append(out, rec)
		}
	}
	return out, nil
}
