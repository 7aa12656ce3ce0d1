package volstats

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// Usage is a volume's usage. Total and available come from statfs of the file system; used bytes and inodes
// from walking the volume's directory tree.
type Usage struct {
	BytesTotal, BytesAvailable, BytesUsed int64
	InodesTotal, InodesFree, InodesUsed   int64
	Measured                              time.Time
}

// WalkFunc measures the bytes (allocated blocks) and inodes under path, giving up with ErrStopped once stop is
// closed.
type WalkFunc func(stop <-chan struct{}, path string) (bytes, inodes int64, err error)

// ErrStopped is returned by a walk cut short by Close.
var ErrStopped = errors.New("volume usage walk stopped")

// Config configures a Statter.
type Config struct {
	// RefreshPeriod is how long a measurement is served before a new walk starts; default 4h.
	RefreshPeriod time.Duration
	// PerFileSystem bounds concurrent walks of one file system; default 5.
	PerFileSystem int
	// Walk measures a volume; default DiskUsage.
	Walk WalkFunc
}

// Statter caches volume usage per published target (volume ID and path) and refreshes it in the background.
type Statter struct {
	cfg     Config
	stop    chan struct{}
	closing sync.Once
	wg      sync.WaitGroup

	mu      sync.Mutex
	entries map[target]*entry
	slots   map[string]chan struct{}
}

// target is one published target of a volume: a volume published at two paths has two entries, so unpublishing
// one keeps the other's statistics.
type target struct{ volumeID, path string }

type entry struct {
	usage   *Usage
	running bool
}

// New returns a Statter; Close stops its walks.
func New(cfg Config) *Statter {
	if cfg.RefreshPeriod <= 0 {
		cfg.RefreshPeriod = 4 * time.Hour
	}
	if cfg.PerFileSystem <= 0 {
		cfg.PerFileSystem = 5
	}
	if cfg.Walk == nil {
		cfg.Walk = DiskUsage
	}
	return &Statter{cfg: cfg, stop: make(chan struct{}), entries: map[target]*entry{}, slots: map[string]chan struct{}{}}
}

// Get returns the cached usage of volumeID at path (ok false before the first walk finished) and starts a walk of
// path when there is no fresh measurement and none is running. fileSystemID selects the rate limit.
func (s *Statter) Get(volumeID, fileSystemID, path string) (Usage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := target{volumeID, path}
	e := s.entries[key]
	if e == nil {
		e = &entry{}
		s.entries[key] = e
	}
	stale := e.usage == nil || time.Since(e.usage.Measured) >= s.cfg.RefreshPeriod
	if stale && !e.running && !s.stopped() {
		e.running = true
		slot := s.slots[fileSystemID]
		if slot == nil {
			slot = make(chan struct{}, s.cfg.PerFileSystem)
			s.slots[fileSystemID] = slot
		}
		s.wg.Add(1)
		go s.measure(key, e, slot)
	}
	if e.usage == nil {
		return Usage{}, false
	}
	return *e.usage, true
}

// measure waits for a slot of the file system, walks, and stores the result; the slot and the running mark are
// released on every path, so a failed walk is retried by the next Get.
func (s *Statter) measure(key target, e *entry, slot chan struct{}) {
	volumeID, path := key.volumeID, key.path
	defer s.wg.Done()
	var u *Usage
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		e.running = false
		if u != nil && s.entries[key] == e { // a Forget meanwhile drops the result
			e.usage = u
		}
	}()
	select {
	case slot <- struct{}{}:
		defer func() { <-slot }()
	case <-s.stop:
		return
	}
	got, err := s.walk(path)
	if err != nil {
		klog.ErrorS(err, "Measuring volume usage", "volumeID", volumeID, "path", path)
		return
	}
	u = &got
}

func (s *Statter) walk(path string) (Usage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Usage{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bytes, inodes, err := s.cfg.Walk(s.stop, path)
	if err != nil {
		return Usage{}, err
	}
	bs := int64(st.Bsize) // int64 on amd64, not on every platform
	return Usage{
		BytesTotal: int64(st.Blocks) * bs, BytesAvailable: int64(st.Bavail) * bs, BytesUsed: bytes,
		InodesTotal: int64(st.Files), InodesFree: int64(st.Ffree), InodesUsed: inodes, Measured: time.Now(),
	}, nil
}

// Forget drops the cache entry of volumeID at path (on unpublish of that target); other targets of the volume keep
// theirs. A walk in progress finishes but is not stored.
func (s *Statter) Forget(volumeID, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, target{volumeID, path})
}

// Close stops walks in progress and waits for them; later Gets serve the cache only.
func (s *Statter) Close() {
	s.mu.Lock()
	s.closing.Do(func() { close(s.stop) })
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Statter) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// DiskUsage walks path without following symbolic links or crossing into other mounts, adding up allocated
// blocks (as du does) and counting inodes; it stops with ErrStopped when stop is closed.
func DiskUsage(stop <-chan struct{}, path string) (bytes, inodes int64, err error) {
	var root syscall.Stat_t
	if err := syscall.Lstat(path, &root); err != nil {
		return 0, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			if errors.Is(werr, fs.ErrNotExist) || errors.Is(werr, fs.ErrPermission) {
				return nil // removed or unreadable meanwhile: measure the rest
			}
			return werr
		}
		if inodes%1024 == 0 {
			select {
			case <-stop:
				return ErrStopped
			default:
			}
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return nil
		}
		if st.Dev != root.Dev {
			return filepath.SkipDir
		}
		inodes++
		bytes += st.Blocks * 512
		return nil
	})
	return bytes, inodes, err
}
