package gidalloc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
)

// listing is a Lister over a fixed, editable set of access points, in one page, that counts its listings.
type listing struct {
	mu    sync.Mutex
	gids  []uint32
	calls int
	err   error
}

func (l *listing) ListAccessPointsPage(_ context.Context, _, _ string) ([]cloud.AccessPoint, string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.err != nil {
		return nil, "", l.err
	}
	aps := make([]cloud.AccessPoint, len(l.gids))
	for i, g := range l.gids {
		aps[i] = cloud.AccessPoint{HasPosixUser: true, GID: g}
	}
	return aps, "", nil
}

// pages is a Lister of three pages (GIDs 1, 2, 3) whose second page fails fails times with a retryable error, and
// which can hold every call until released.
type pages struct {
	mu      sync.Mutex
	fails   int
	calls   []string // tokens asked for
	release chan struct{}
}

func (p *pages) ListAccessPointsPage(ctx context.Context, _, token string) ([]cloud.AccessPoint, string, error) {
	if p.release != nil {
		select {
		case <-p.release:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, token)
	next := map[string]string{"": "2", "2": "3", "3": ""}[token]
	if token == "2" && p.fails > 0 {
		p.fails--
		return nil, "", cloud.ErrThrottled
	}
	gid := map[string]uint32{"": 1, "2": 2, "3": 3}[token]
	return []cloud.AccessPoint{{HasPosixUser: true, GID: gid}}, next, nil
}

// TestListingKeepsProgressAcrossPageFailures: a page that is throttled is asked again from its own token; the
// pages before it are not fetched again.
func TestListingKeepsProgressAcrossPageFailures(t *testing.T) {
	p := &pages{fails: 2}
	a := New(time.Minute, nil)
	a.PageBackoff = time.Millisecond
	lease, err := a.Allocate(t.Context(), "fs", p, "fs-1", 1, 10)
	if err != nil || lease.GID != 4 {
		t.Fatalf("Allocate = %v, %v; want GID 4", lease, err)
	}
	if got := strings.Join(p.calls, ","); got != ",2,2,2,3" {
		t.Fatalf("pages asked %q, want \",2,2,2,3\" (page 2 retried, page 1 not again)", got)
	}
}

// TestListingOutlivesACallerDeadline: the caller that starts a slow listing gives up at its deadline; the listing
// goes on, and a later caller gets its result without starting over.
func TestListingOutlivesACallerDeadline(t *testing.T) {
	p := &pages{release: make(chan struct{})}
	a := New(time.Minute, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := a.Allocate(ctx, "fs", p, "fs-1", 1, 10); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first caller: %v, want its deadline", err)
	}
	close(p.release)
	lease, err := a.Allocate(t.Context(), "fs", p, "fs-1", 1, 10)
	if err != nil || lease.GID != 4 {
		t.Fatalf("second caller = %v, %v; want GID 4", lease, err)
	}
	if len(p.calls) != 3 {
		t.Fatalf("pages asked %q: want one listing of 3 pages", p.calls)
	}
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestAllocateSkipsUsedAndListsOnce(t *testing.T) {
	l := &listing{gids: []uint32{100, 101, 103}}
	a := New(time.Minute, nil)
	var got []uint32
	for range 3 {
		lease, err := a.Allocate(t.Context(), "fs", l, "fs-1", 100, 110)
		if err != nil {
			t.Fatal(err)
		}
		lease.Commit()
		got = append(got, lease.GID)
	}
	if want := []uint32{102, 104, 105}; !equal(got, want) {
		t.Fatalf("GIDs = %v, want %v", got, want)
	}
	if l.calls != 1 {
		t.Fatalf("listed %d times, want 1", l.calls)
	}
}

func TestAllocateConcurrentNeverDuplicates(t *testing.T) {
	l := &listing{gids: []uint32{5, 7, 9}}
	a := New(time.Minute, nil)
	var mu sync.Mutex
	seen := map[uint32]int{}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lease, err := a.Allocate(t.Context(), "fs", l, "fs-1", 1, 100)
			if err != nil {
				t.Error(err)
				return
			}
			if i%4 == 0 {
				lease.Release()
				return
			}
			lease.Commit()
			mu.Lock()
			seen[lease.GID]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	for gid, n := range seen {
		if n > 1 || gid == 5 || gid == 7 || gid == 9 {
			t.Errorf("GID %d handed out %d times (or was already used)", gid, n)
		}
	}
	if len(seen) != 48 {
		t.Errorf("committed %d GIDs, want 48", len(seen))
	}
}

func TestAllocateResyncSeesChangesBehindOurBack(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := &listing{gids: []uint32{1}}
	a := New(time.Minute, c.now)
	lease, _ := a.Allocate(t.Context(), "fs", l, "fs-1", 1, 4)
	lease.Commit() // 2
	l.mu.Lock()
	l.gids = []uint32{2, 3} // someone created 3 and deleted 1
	l.mu.Unlock()
	c.t = c.t.Add(2 * time.Minute)
	lease, _ = a.Allocate(t.Context(), "fs", l, "fs-1", 1, 4)
	if lease.GID != 4 {
		t.Fatalf("after resync got GID %d, want 4 (3 was created behind our back)", lease.GID)
	}
	lease.Commit()
	lease, err := a.Allocate(t.Context(), "fs", l, "fs-1", 1, 4)
	if err != nil || lease.GID != 1 {
		t.Fatalf("got %v, %v; want the GID freed behind our back (1)", lease, err)
	}
	if l.calls != 2 {
		t.Fatalf("listed %d times, want 2", l.calls)
	}
}

func TestAllocateExhausted(t *testing.T) {
	l := &listing{gids: []uint32{10, 11}}
	a := New(time.Minute, nil)
	_, err := a.Allocate(t.Context(), "fs", l, "fs-1", 10, 11)
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
	for _, w := range []string{"gidRangeStart", "gidRangeEnd", "fileSystemId", "[10, 11]"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
	if l.calls != 2 {
		t.Errorf("listed %d times, want 2 (the second to catch deletions)", l.calls)
	}
	// A deletion behind our back is found by that second look.
	l.mu.Lock()
	l.gids = []uint32{10}
	l.mu.Unlock()
	lease, err := a.Allocate(t.Context(), "fs", l, "fs-1", 10, 11)
	if err != nil || lease.GID != 11 {
		t.Fatalf("got %v, %v; want 11", lease, err)
	}
}

func TestAllocateListFailure(t *testing.T) {
	l := &listing{err: cloud.ErrThrottled}
	a := New(time.Minute, nil)
	a.PageRetries, a.PageBackoff = 2, time.Millisecond
	if _, err := a.Allocate(t.Context(), "fs", l, "fs-1", 1, 10); !errors.Is(err, cloud.ErrThrottled) {
		t.Fatalf("err = %v, want the listing error", err)
	}
	if l.calls != 3 {
		t.Fatalf("listed %d times, want 3 (a throttled page is tried twice more)", l.calls)
	}
}

func equal(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAnotherWriterMakesTheFileSystemShared: a listing that finds a GID the view did not count (another writer)
// switches the file system to GIDs from the top of the range, next fit downwards, and to SharedResync between
// listings; SharedHold after the last sighting it is back to next fit upwards and the resync period.
func TestAnotherWriterMakesTheFileSystemShared(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := &listing{gids: []uint32{10}}
	a := New(time.Minute, c.now)
	take := func(want uint32) {
		t.Helper()
		lease, err := a.Allocate(t.Context(), "fs", l, "fs-1", 10, 20)
		if err != nil || lease.GID != want {
			t.Fatalf("Allocate = %v, %v; want GID %d", lease, err, want)
		}
		lease.Commit()
	}
	take(11) // first listing: nothing to compare with, next fit upwards
	l.mu.Lock()
	l.gids = []uint32{10, 11, 12} // 11 is ours; 12 is another writer's
	l.mu.Unlock()
	c.t = c.t.Add(time.Minute)
	take(20) // the listing saw 12: from the top
	take(19)
	l.mu.Lock()
	l.gids = []uint32{10, 11, 12, 19, 20} // what EFS now has
	l.mu.Unlock()
	calls := l.calls
	c.t = c.t.Add(a.SharedResync)
	take(18) // the view of a shared file system is trusted for SharedResync only
	if l.calls != calls+1 {
		t.Fatalf("%d listings after SharedResync, want 1", l.calls-calls)
	}
	l.mu.Lock()
	l.gids = []uint32{10, 11, 12, 18, 19, 20} // nobody else writes any more
	l.mu.Unlock()
	c.t = c.t.Add(a.SharedHold)
	take(13) // no longer shared: next fit upwards again, after 11
}
