package provision

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
)

// ErrExhausted is wrapped when a file system has no room for another volume: no free GID in the StorageClass's
// range, or the file system's access point quota is reached.
var ErrExhausted = errors.New("resources exhausted")

// Lister lists every access point of a file system.
type Lister interface {
	ListAccessPoints(ctx context.Context, fileSystemID string) ([]cloud.AccessPoint, error)
}

// GIDAllocator hands out GIDs that no access point of the file system uses, without listing the file system on
// every call: it keeps, per file system, the GIDs seen in the last full listing plus those it handed out since, and
// lists again when that view is older than the resync period, when a range looks full, or on request.
// Concurrent callers on one file system never get the same GID: reservation happens under the file system's lock.
type GIDAllocator struct {
	resync time.Duration
	now    func() time.Time
	mu     sync.Mutex
	fss    map[string]*fsGIDs
}

// NewGIDAllocator returns an allocator that lists a file system again once its view is older than resync.
func NewGIDAllocator(resync time.Duration, now func() time.Time) *GIDAllocator {
	if now == nil {
		now = time.Now
	}
	return &GIDAllocator{resync: resync, now: now, fss: map[string]*fsGIDs{}}
}

type fsGIDs struct {
	mu          sync.Mutex
	loaded      bool
	listedAt    time.Time
	used        map[uint32]int // GID -> access points known to carry it
	reserved    map[uint32]int // handed out, CreateAccessPoint not finished
	refreshing  bool
	refreshDone chan struct{}
	sinceStart  map[uint32]int // committed while the running listing was in flight
	cursor      map[[2]uint32]uint32
}

// Lease is one reserved GID; exactly one of Commit or Release must be called.
type Lease struct {
	GID uint32
	s   *fsGIDs
}

// Commit records that an access point now carries the GID.
func (l *Lease) Commit() {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.unreserve(l.GID)
	l.s.used[l.GID]++
	if l.s.refreshing {
		l.s.sinceStart[l.GID]++
	}
}

// Lost records that the create carrying the GID failed in a way that may have created the access point anyway (a
// lost reply): the GID stays in use in the view, and the view is stale, so the next allocation lists the file
// system again and sees what EFS really has.
func (l *Lease) Lost() {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.unreserve(l.GID)
	l.s.used[l.GID]++
	if l.s.refreshing {
		l.s.sinceStart[l.GID]++
	}
	l.s.listedAt = time.Time{}
}

// Release gives the GID back unused.
func (l *Lease) Release() {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.unreserve(l.GID)
}

func (s *fsGIDs) unreserve(gid uint32) {
	if s.reserved[gid]--; s.reserved[gid] <= 0 {
		delete(s.reserved, gid)
	}
}

func (a *GIDAllocator) state(key string) *fsGIDs {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.fss[key]
	if !ok {
		s = &fsGIDs{used: map[uint32]int{}, reserved: map[uint32]int{}, cursor: map[[2]uint32]uint32{}}
		a.fss[key] = s
	}
	return s
}

// Allocate reserves a GID in [lo, hi] unused on the file system. key identifies the file system and the identity
// that sees it (the role for cross-account file systems).
func (a *GIDAllocator) Allocate(ctx context.Context, key string, l Lister, fileSystemID string, lo, hi uint32) (*Lease, error) {
	s := a.state(key)
	if err := a.ensureFresh(ctx, s, l, fileSystemID); err != nil {
		return nil, err
	}
	if gid, ok := s.pick(lo, hi); ok {
		return &Lease{GID: gid, s: s}, nil
	}
	// The range looks full: access points may have been deleted behind our back. Look once more.
	if err := a.refresh(ctx, s, l, fileSystemID); err != nil {
		return nil, err
	}
	if gid, ok := s.pick(lo, hi); ok {
		return &Lease{GID: gid, s: s}, nil
	}
	return nil, fmt.Errorf("%w: no free GID in [%d, %d] on file system %s: widen the StorageClass parameters %s/%s, or set %s to another file system",
		ErrExhausted, lo, hi, fileSystemID, ParamGIDRangeStart, ParamGIDRangeEnd, ParamFileSystemID)
}

// Record adds the GID of an access point the driver did not just allocate for (one adopted by client token, or
// reused) to the view, unless the view already counts it.
func (a *GIDAllocator) Record(key string, ap *cloud.AccessPoint) {
	if ap == nil || !ap.HasPosixUser {
		return
	}
	s := a.state(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used[ap.GID] == 0 {
		s.used[ap.GID] = 1
		if s.refreshing {
			s.sinceStart[ap.GID]++
		}
	}
}

// Forget drops what is known about the GID of a deleted access point.
func (a *GIDAllocator) Forget(key string, gid uint32) {
	s := a.state(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used[gid]--; s.used[gid] <= 0 {
		delete(s.used, gid)
	}
}

// Invalidate makes the next Allocate on the file system list it again.
func (a *GIDAllocator) Invalidate(key string) {
	s := a.state(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listedAt = time.Time{}
}

// ensureFresh loads the file system's view on first use (everyone waits for one listing) and refreshes a stale
// one (the caller that notices lists; the others keep allocating from the current view, which stays correct for
// what this process created).
func (a *GIDAllocator) ensureFresh(ctx context.Context, s *fsGIDs, l Lister, fileSystemID string) error {
	for {
		s.mu.Lock()
		stale := a.now().Sub(s.listedAt) >= a.resync
		switch {
		case s.loaded && (!stale || s.refreshing):
			s.mu.Unlock()
			return nil
		case !s.loaded && s.refreshing:
			done := s.refreshDone
			s.mu.Unlock()
			select {
			case <-done:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		s.mu.Unlock()
		err := a.refresh(ctx, s, l, fileSystemID)
		if err != nil && s.isLoaded() {
			return nil // a failed background refresh leaves the current view in use
		}
		return err
	}
}

func (s *fsGIDs) isLoaded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded
}

// refresh lists the file system and replaces the view, keeping GIDs committed while the listing ran.
func (a *GIDAllocator) refresh(ctx context.Context, s *fsGIDs, l Lister, fileSystemID string) error {
	s.mu.Lock()
	if s.refreshing {
		done := s.refreshDone
		s.mu.Unlock()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.refreshing, s.refreshDone, s.sinceStart = true, make(chan struct{}), map[uint32]int{}
	s.mu.Unlock()

	aps, err := l.ListAccessPoints(ctx, fileSystemID)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshing = false
	close(s.refreshDone)
	if err != nil {
		return fmt.Errorf("list access points of %s to choose a GID: %w", fileSystemID, err)
	}
	used := make(map[uint32]int, len(aps)+len(s.sinceStart))
	for _, ap := range aps {
		if ap.HasPosixUser {
			used[ap.GID]++
		}
	}
	for gid, n := range s.sinceStart {
		if used[gid] < n {
			used[gid] = n
		}
	}
	s.used, s.loaded, s.listedAt = used, true, a.now()
	return nil
}

// pick reserves the next free GID in [lo, hi] after the range's cursor (next fit), so a just-freed GID is not
// handed out again at once.
func (s *fsGIDs) pick(lo, hi uint32) (uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := uint64(hi) - uint64(lo) + 1
	// Among len(used)+len(reserved)+1 consecutive candidates at least one is free, unless the range is smaller.
	tries := min(size, uint64(len(s.used)+len(s.reserved)+1))
	r := [2]uint32{lo, hi}
	start, ok := s.cursor[r]
	if !ok || start < lo || start > hi {
		start = lo
	}
	for i := uint64(0); i < tries; i++ {
		gid := uint32(uint64(lo) + (uint64(start-lo)+i)%size)
		if s.used[gid] == 0 && s.reserved[gid] == 0 {
			s.reserved[gid]++
			s.cursor[r] = uint32(uint64(lo) + (uint64(gid-lo)+1)%size)
			return gid, true
		}
	}
	return 0, false
}
