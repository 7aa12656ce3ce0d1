package gidalloc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
)

// ErrExhausted is wrapped when a file system has no room for another volume: no free GID in the StorageClass's
// range, or the file system's access point quota is reached.
var ErrExhausted = errors.New("resources exhausted")

// Lister lists the access points of a file system one page at a time: token "" asks for the first page; the
// returned token is "" after the last one.
type Lister interface {
	ListAccessPointsPage(ctx context.Context, fileSystemID, token string) ([]cloud.AccessPoint, string, error)
}

// Allocator hands out GIDs that no access point of the file system uses, without listing the file system on
// every call: it keeps, per file system, the GIDs seen in the last full listing plus those it handed out since, and
// lists again when that view is older than the resync period, when a range looks full, or on request.
// Concurrent callers on one file system never get the same GID: reservation happens under the file system's lock.
//
// Another writer on the same file system (the upstream driver during a switch, or another cluster) is seen only at
// the next listing: a GID it takes after one listing can be handed out here again until the next one, at most the
// resync period later. A listing that finds access points this view did not count marks the file system as shared
// for SharedHold; while it is, the view is trusted for at most SharedResync, and GIDs are taken from the top of the
// range downwards, away from a writer that takes the lowest free GID (upstream's allocator), so that the two meet
// only when the range is nearly full.
//
// A listing runs on its own, detached from the request that started it: a caller whose deadline passes gives up
// waiting, but the listing goes on for the next callers, and a page that fails with throttling or a server error
// is retried from where it stopped (PageRetries times, backing off from PageBackoff up to 5 s) instead of starting
// the listing over. So a slow listing under API faults fails no create but those whose own deadline passes, one by
// one, and completes for the rest.
type Allocator struct {
	resync time.Duration
	now    func() time.Time
	mu     sync.Mutex
	fss    map[string]*fsGIDs
	// PageRetries is how often one page is tried again after a retryable failure (default 10).
	PageRetries int
	// PageBackoff is the first wait before a page is tried again (default 200ms), doubled up to 5 s.
	PageBackoff time.Duration
	// ListTimeout bounds one whole listing (default 10 minutes).
	ListTimeout time.Duration
	// SharedResync is how long the view of a file system with another writer is trusted (default 1 s; the resync
	// period when that is shorter).
	SharedResync time.Duration
	// SharedHold is how long a file system counts as shared after a listing last found another writer's access
	// points (default 10 minutes).
	SharedHold time.Duration
}

// New returns an allocator that lists a file system again once its view is older than resync.
func New(resync time.Duration, now func() time.Time) *Allocator {
	if now == nil {
		now = time.Now
	}
	return &Allocator{resync: resync, now: now, fss: map[string]*fsGIDs{}, PageRetries: 10, PageBackoff: 200 * time.Millisecond,
		ListTimeout: 10 * time.Minute, SharedResync: time.Second, SharedHold: 10 * time.Minute}
}

type fsGIDs struct {
	mu          sync.Mutex
	loaded      bool
	listedAt    time.Time
	used        map[uint32]int // GID -> access points known to carry it
	reserved    map[uint32]int // handed out, CreateAccessPoint not finished
	refreshing  bool
	refreshDone chan struct{}
	refreshErr  error          // the result of the listing that closed refreshDone
	sinceStart  map[uint32]int // committed while the running listing was in flight
	cursor      map[cursorKey]uint32
	// otherWriterAt is when a listing last found access points the view did not count (zero: never).
	otherWriterAt time.Time
}

// cursorKey is one range and a direction: next fit upwards from the range's start, or downwards from its end.
type cursorKey struct {
	lo, hi uint32
	down   bool
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

func (a *Allocator) state(key string) *fsGIDs {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.fss[key]
	if !ok {
		s = &fsGIDs{used: map[uint32]int{}, reserved: map[uint32]int{}, cursor: map[cursorKey]uint32{}}
		a.fss[key] = s
	}
	return s
}

// Allocate reserves a GID in [lo, hi] unused on the file system. key identifies the file system and the identity
// that sees it (the role for cross-account file systems).
func (a *Allocator) Allocate(ctx context.Context, key string, l Lister, fileSystemID string, lo, hi uint32) (*Lease, error) {
	s := a.state(key)
	if err := a.ensureFresh(ctx, s, l, fileSystemID); err != nil {
		return nil, err
	}
	if gid, ok := s.pick(lo, hi, a.shared(s)); ok {
		return &Lease{GID: gid, s: s}, nil
	}
	// The range looks full: access points may have been deleted behind our back. Look once more.
	if err := a.refresh(ctx, s, l, fileSystemID); err != nil {
		return nil, err
	}
	if gid, ok := s.pick(lo, hi, a.shared(s)); ok {
		return &Lease{GID: gid, s: s}, nil
	}
	return nil, fmt.Errorf("%w: no free GID in [%d, %d] on file system %s: widen the StorageClass parameters %s/%s, or set %s to another file system",
		ErrExhausted, lo, hi, fileSystemID, scparams.ParamGIDRangeStart, scparams.ParamGIDRangeEnd, scparams.ParamFileSystemID)
}

// Record adds the GID of an access point the driver did not just allocate for (one adopted by client token, or
// reused) to the view, unless the view already counts it.
func (a *Allocator) Record(key string, ap *cloud.AccessPoint) {
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
func (a *Allocator) Forget(key string, gid uint32) {
	s := a.state(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used[gid]--; s.used[gid] <= 0 {
		delete(s.used, gid)
	}
}

// Invalidate makes the next Allocate on the file system list it again.
func (a *Allocator) Invalidate(key string) {
	s := a.state(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listedAt = time.Time{}
}

// ensureFresh loads the file system's view on first use (every caller waits for one listing, or for its own
// deadline) and refreshes a stale one (the caller that notices waits for the listing; the others keep allocating
// from the current view, which stays correct for what this process created).
func (a *Allocator) ensureFresh(ctx context.Context, s *fsGIDs, l Lister, fileSystemID string) error {
	maxAge := a.resync
	if a.shared(s) {
		maxAge = min(maxAge, a.SharedResync)
	}
	s.mu.Lock()
	stale := a.now().Sub(s.listedAt) >= maxAge
	if s.loaded && (!stale || s.refreshing) {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	err := a.refresh(ctx, s, l, fileSystemID)
	if err != nil && s.isLoaded() {
		return nil // a failed or slow refresh leaves the current view in use
	}
	return err
}

// shared reports whether a listing found another writer on the file system within SharedHold.
func (a *Allocator) shared(s *fsGIDs) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.otherWriterAt.IsZero() && a.now().Sub(s.otherWriterAt) < a.SharedHold
}

func (s *fsGIDs) isLoaded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded
}

// refresh waits for a listing of the file system, starting one when none runs, and returns its result or the
// caller's context error; the listing itself goes on when the caller gives up.
func (a *Allocator) refresh(ctx context.Context, s *fsGIDs, l Lister, fileSystemID string) error {
	s.mu.Lock()
	if !s.refreshing {
		s.refreshing, s.refreshDone, s.sinceStart = true, make(chan struct{}), map[uint32]int{}
		go a.list(context.WithoutCancel(ctx), s, l, fileSystemID)
	}
	done := s.refreshDone
	s.mu.Unlock()
	select {
	case <-done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.refreshErr
	case <-ctx.Done():
		return fmt.Errorf("waiting for the listing of %s to choose a GID (it goes on for later requests): %w", fileSystemID, ctx.Err())
	}
}

// list pages through the file system's access points, retrying a failed page from where it stopped, then replaces
// the view, keeping GIDs committed while the listing ran.
func (a *Allocator) list(ctx context.Context, s *fsGIDs, l Lister, fileSystemID string) {
	ctx, cancel := context.WithTimeout(ctx, a.ListTimeout)
	defer cancel()
	var (
		aps   []cloud.AccessPoint
		token string
		err   error
	)
	for {
		var page []cloud.AccessPoint
		page, token, err = a.page(ctx, l, fileSystemID, token)
		if err != nil {
			break
		}
		aps = append(aps, page...)
		if token == "" {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshing = false
	if err != nil {
		s.refreshErr = fmt.Errorf("list access points of %s to choose a GID: %w", fileSystemID, err)
		close(s.refreshDone)
		return
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
	if s.loaded {
		for gid, n := range used {
			if n > s.used[gid]+s.reserved[gid] {
				if s.otherWriterAt.IsZero() || a.now().Sub(s.otherWriterAt) >= a.SharedHold {
					klog.InfoS("Another writer creates access points on this file system; taking GIDs from the top of the range and listing more often",
						"fileSystemID", fileSystemID, "gid", gid, "sharedResync", min(a.resync, a.SharedResync).String())
				}
				s.otherWriterAt = a.now()
				break
			}
		}
	}
	for gid, n := range used {
		if n > 1 {
			klog.ErrorS(nil, "Access points share a GID on this file system: their volumes can read each other's files", "fileSystemID", fileSystemID, "gid", gid, "accessPoints", n)
		}
	}
	s.used, s.loaded, s.listedAt, s.refreshErr = used, true, a.now(), nil
	close(s.refreshDone)
}

// page fetches one page, trying again after throttling or a server error.
func (a *Allocator) page(ctx context.Context, l Lister, fileSystemID, token string) ([]cloud.AccessPoint, string, error) {
	backoff := a.PageBackoff
	for try := 0; ; try++ {
		page, next, err := l.ListAccessPointsPage(ctx, fileSystemID, token)
		if err == nil {
			return page, next, nil
		}
		retryable := errors.Is(err, cloud.ErrThrottled) || errors.Is(err, cloud.ErrUnavailable)
		if !retryable || try >= a.PageRetries || ctx.Err() != nil {
			return nil, "", err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, "", err
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// pick reserves the next free GID in [lo, hi] after the range's cursor (next fit), so a just-freed GID is not
// handed out again at once: upwards from lo, or, on a file system with another writer, downwards from hi.
func (s *fsGIDs) pick(lo, hi uint32, down bool) (uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := uint64(hi) - uint64(lo) + 1
	// Among len(used)+len(reserved)+1 consecutive candidates at least one is free, unless the range is smaller.
	tries := min(size, uint64(len(s.used)+len(s.reserved)+1))
	k := cursorKey{lo: lo, hi: hi, down: down}
	// off is the candidate's distance from the range's start in the direction of the search.
	at := func(off uint64) uint32 {
		if down {
			return uint32(uint64(hi) - off%size)
		}
		return uint32(uint64(lo) + off%size)
	}
	start := uint64(0)
	if c, ok := s.cursor[k]; ok && c >= lo && c <= hi {
		if down {
			start = uint64(hi - c)
		} else {
			start = uint64(c - lo)
		}
	}
	for i := uint64(0); i < tries; i++ {
		gid := at(start + i)
		if s.used[gid] == 0 && s.reserved[gid] == 0 {
			s.reserved[gid]++
			s.cursor[k] = at(start + i + 1)
			return gid, true
		}
	}
	return 0, false
}
