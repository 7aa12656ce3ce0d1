package fakeaws

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/efs/types"
)

// TestConcurrentCreates races 16 callers on 40 client tokens (each token tried by every caller) against a quota
// of 30: exactly 30 access points exist afterwards, one per winning token, and every loser got
// AccessPointAlreadyExists naming the winner or AccessPointLimitExceeded.
func TestConcurrentCreates(t *testing.T) {
	s := startServer(t, Options{AccessPointQuota: 30})
	fsID := s.AddFileSystem(FileSystem{})
	c := efsClient(s, 1)
	const callers, tokens = 16, 40
	var (
		mu      sync.Mutex
		created = map[string]string{} // token → access point ID
		errs    []error
		wg      sync.WaitGroup
	)
	for w := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range tokens {
				token := fmt.Sprint("tok-", (i+w)%tokens)
				out, err := c.CreateAccessPoint(t.Context(), createAPInput(fsID, token, int64(i), "/p"))
				var exists *types.AccessPointAlreadyExists
				var limit *types.AccessPointLimitExceeded
				mu.Lock()
				switch {
				case err == nil:
					if prev, dup := created[token]; dup {
						errs = append(errs, fmt.Errorf("token %s created twice: %s and %s", token, prev, aws.ToString(out.AccessPointId)))
					}
					created[token] = aws.ToString(out.AccessPointId)
				case errors.As(err, &exists), errors.As(err, &limit):
				default:
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	aps := s.AccessPoints(fsID)
	if len(aps) != 30 || len(created) != 30 {
		t.Errorf("%d access points, %d successful creates; want 30 and 30", len(aps), len(created))
	}
	for _, ap := range aps {
		if created[ap.ClientToken] != ap.AccessPointId {
			t.Errorf("access point %s (token %s) was not reported created", ap.AccessPointId, ap.ClientToken)
		}
	}
	if n := s.Calls("CreateAccessPoint"); n != callers*tokens {
		t.Errorf("Calls(CreateAccessPoint) = %d, want %d", n, callers*tokens)
	}
}

// BenchmarkFake measures the fake's own cost per call over loopback HTTP with the real SDK client, on a file
// system holding 5,000 access points, with 16 concurrent callers: CreateAccessPoint + DeleteAccessPoint pairs,
// and DescribeAccessPoints pages of 100 from the middle of the listing.
func BenchmarkFake(b *testing.B) {
	s, err := Start(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fsID := s.AddFileSystem(FileSystem{})
	for i := range 5000 {
		s.AddAccessPoint(AccessPoint{FileSystemId: fsID, PosixUser: &PosixUser{Uid: 0, Gid: int64(50000 + i)},
			RootDirectory: RootDirectory{Path: fmt.Sprintf("/dyn/pvc-%d", i)}})
	}
	c := efsClient(s, 1)
	b.Run("CreateDeleteAccessPoint", func(b *testing.B) {
		var n sync.Mutex
		next := 0
		b.SetParallelism(8) // 16 callers on 2 CPUs
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Lock()
				next++
				token := fmt.Sprint("bench-", next)
				n.Unlock()
				out, err := c.CreateAccessPoint(b.Context(), createAPInput(fsID, token, 1, "/bench"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.DeleteAccessPoint(b.Context(), &efs.DeleteAccessPointInput{AccessPointId: out.AccessPointId}); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("DescribeAccessPointsPage", func(b *testing.B) {
		token := encodePageToken(fsID, s.AccessPoints(fsID)[2500].seqForBench(s))
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				out, err := c.DescribeAccessPoints(b.Context(), &efs.DescribeAccessPointsInput{
					FileSystemId: aws.String(fsID), MaxResults: aws.Int32(100), NextToken: aws.String(token)})
				if err != nil || len(out.AccessPoints) != 100 {
					b.Fatalf("page: %d access points, %v", len(out.AccessPoints), err)
				}
			}
		})
	})
}

// seqForBench returns the creation sequence number of an access point (for building page tokens in tests).
func (a AccessPoint) seqForBench(s *Server) uint64 {
	s.state.mu.RLock()
	defer s.state.mu.RUnlock()
	return s.state.aps[a.AccessPointId].seq
}
