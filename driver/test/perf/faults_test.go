package perf

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// provisionerTimeout is csi-provisioner's default --timeout: each CreateVolume call gets this long.
const provisionerTimeout = 15 * time.Second

// faultResult is what the fault scenario measured.
type faultResult struct {
	firstAttemptFailures int           // creates whose first call failed
	deadlineFailures     int           // calls that ended in DeadlineExceeded
	largestBurst         int           // most calls failing within one second of each other
	calls                int           // CreateVolume calls until every volume existed
	elapsed              time.Duration // until every volume existed
	duplicateGIDs        int
	reasons              map[string]int // failed calls by cause
	firstSuccess         time.Duration  // until the first create succeeded (the first GID listing had finished)
	gaveUp               int            // creates still failing after 3 minutes
}

// faultLoad is one run of the fault scenario.
type faultLoad struct {
	existing    int           // access points on the file system before the run
	creates     int           // volumes to create
	callers     int           // concurrent CreateVolume callers
	latency     time.Duration // added to every EFS call
	listLatency time.Duration // when set, the latency of each DescribeAccessPoints page instead (a slow listing)
	callTimeout time.Duration // each CreateVolume call's deadline (csi-provisioner's --timeout)
	retryAfter  time.Duration // pause before a failed call is made again
	giveUp      time.Duration // a create still failing this long after the start is given up
	seed        uint64        // fakeaws's fault dice; 0 is random
}

// issueFaults is the issue's fault scenario: a fresh controller (no GID view yet), 5,000 access points, 20%
// throttling and 5% server errors on every EFS call, 20 ms latency, creates by 16 callers that each give a call
// 15 s (csi-provisioner's timeout) and retry a failed call after 1 s, as the provisioner does. With listLatency
// set (a slow listing: five pages at 4 s take longer than the provisioner's 15 s), only the pages are slowed.
func issueFaults(creates int, listLatency time.Duration) faultLoad {
	return faultLoad{existing: 5000, creates: creates, callers: 16, latency: 20 * time.Millisecond, listLatency: listLatency,
		callTimeout: provisionerTimeout, retryAfter: time.Second, giveUp: 3 * time.Minute}
}

// runFaults runs l: every EFS call gets 20% throttling and 5% server errors on top of its latency.
func runFaults(tb testing.TB, l faultLoad) faultResult {
	tb.Helper()
	tb.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEAWSPERF00001")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := fakeaws.Start(fakeaws.Options{AccessPointQuota: 10000, Seed: l.seed})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	fsID := s.AddFileSystem(fakeaws.FileSystem{})
	for i := range l.existing {
		s.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: fsID, PosixUser: &fakeaws.PosixUser{Uid: int64(50000 + i), Gid: int64(50000 + i)},
			RootDirectory: fakeaws.RootDirectory{Path: fmt.Sprintf("/old-%d", i)}})
	}
	client := startDriver(tb, s, time.Minute)
	s.SetFault("*", fakeaws.Fault{Latency: l.latency, ThrottleProbability: 0.2, ErrorProbability: 0.05})
	if l.listLatency > 0 {
		s.SetFault("DescribeAccessPoints", fakeaws.Fault{Latency: l.listLatency, ThrottleProbability: 0.2, ErrorProbability: 0.05})
	}

	var (
		mu       sync.Mutex
		r        faultResult
		failedAt []time.Time
	)
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	for range l.callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				for attempt := 0; ; attempt++ {
					ctx, cancel := context.WithTimeout(tb.Context(), l.callTimeout)
					_, err := client.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%06d", i),
						Parameters: map[string]string{"provisioningMode": "efs-ap", "fileSystemId": fsID, "directoryPerms": "700"},
						VolumeCapabilities: []*csi.VolumeCapability{{
							AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
							AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}}})
					cancel()
					mu.Lock()
					r.calls++
					if err != nil {
						failedAt = append(failedAt, time.Now())
						if attempt == 0 {
							r.firstAttemptFailures++
						}
						if status.Code(err) == codes.DeadlineExceeded {
							r.deadlineFailures++
						}
						if r.reasons == nil {
							r.reasons = map[string]int{}
						}
						r.reasons[cause(err)]++
					}
					if err == nil && r.firstSuccess == 0 {
						r.firstSuccess = time.Since(start)
					}
					mu.Unlock()
					if err == nil {
						break
					}
					if time.Since(start) > l.giveUp {
						mu.Lock()
						r.gaveUp++
						mu.Unlock()
						break
					}
					time.Sleep(l.retryAfter)
				}
			}
		}()
	}
	for i := range l.creates {
		work <- i
	}
	close(work)
	wg.Wait()
	r.elapsed = time.Since(start)
	sort.Slice(failedAt, func(i, j int) bool { return failedAt[i].Before(failedAt[j]) })
	for i := range failedAt {
		j := i
		for j < len(failedAt) && failedAt[j].Sub(failedAt[i]) < time.Second {
			j++
		}
		r.largestBurst = max(r.largestBurst, j-i)
	}
	seen := map[int64]bool{}
	for _, ap := range s.AccessPoints(fsID) {
		if ap.PosixUser != nil {
			if seen[ap.PosixUser.Gid] {
				r.duplicateGIDs++
			}
			seen[ap.PosixUser.Gid] = true
		}
	}
	return r
}

// TestCreateVolumeUnderFaultsSmoke is a short run of the fault scenario in every `go test`, so that it cannot rot:
// a GID listing slower than each call's deadline, under throttling and server errors, must still let every volume
// be created, each with its own GID. It is the property the benchmark's slow-listing variant measures (the listing
// runs detached from the request that started it; before, every create timed out for good). Its bound is a
// give-up time far above the run's few seconds, not a performance threshold.
func TestCreateVolumeUnderFaultsSmoke(t *testing.T) {
	// 3,000 access points are three listing pages of 1,000 (the driver's page size); at 1 s a page the listing
	// takes 3 s or more, three times a call's 1 s deadline.
	l := faultLoad{existing: 3000, creates: 16, callers: 8, latency: 2 * time.Millisecond, listLatency: time.Second,
		callTimeout: time.Second, retryAfter: 100 * time.Millisecond, giveUp: 90 * time.Second, seed: 27}
	r := runFaults(t, l)
	if r.deadlineFailures == 0 {
		t.Fatalf("no call reached its %s deadline: the listing was not slower than a call, so the run does not test "+
			"what it is for (failed calls by cause: %v)", l.callTimeout, r.reasons)
	}
	if r.gaveUp != 0 || r.duplicateGIDs != 0 {
		t.Fatalf("%d of %d creates still failing after %s, %d duplicate GIDs; want 0 and 0 (failed calls by cause: %v)",
			r.gaveUp, l.creates, l.giveUp, r.duplicateGIDs, r.reasons)
	}
	t.Logf("%d creates in %s (first after %s), %d calls, %d deadline failures; failed calls by cause: %v",
		l.creates, r.elapsed.Round(time.Millisecond), r.firstSuccess.Round(time.Millisecond), r.calls, r.deadlineFailures, r.reasons)
}

// BenchmarkCreateVolumeUnderFaults runs the fault scenario: 200 creates with 20 ms per call, and 32 creates with a
// slow listing (4 s per page). Run it with:
//
//	go test ./test/perf -run '^$' -bench BenchmarkCreateVolumeUnderFaults -benchtime 1x
func BenchmarkCreateVolumeUnderFaults(b *testing.B) {
	b.Run("20ms", func(b *testing.B) { benchFaults(b, issueFaults(200, 0)) })
	b.Run("slow-listing", func(b *testing.B) { benchFaults(b, issueFaults(32, 4*time.Second)) })
}

func benchFaults(b *testing.B, l faultLoad) {
	for b.Loop() {
		r := runFaults(b, l)
		if r.duplicateGIDs != 0 {
			b.Fatalf("%d duplicate GIDs", r.duplicateGIDs)
		}
		b.ReportMetric(float64(r.firstAttemptFailures), "first-attempt-failures")
		b.ReportMetric(float64(r.deadlineFailures), "deadline-exceeded")
		b.ReportMetric(float64(r.largestBurst), "largest-failure-burst/s")
		b.ReportMetric(float64(r.calls)/float64(l.creates), "calls/create")
		b.ReportMetric(float64(r.gaveUp), "creates-failing-after-3min")
		b.ReportMetric(r.elapsed.Seconds(), "s-until-all-created")
		b.ReportMetric(r.firstSuccess.Seconds(), "s-until-first-created")
		b.Logf("failed calls by cause: %v", r.reasons)
	}
}

// cause sorts a failed call: waiting for the GID listing, or the AWS operation that failed.
func cause(err error) string {
	msg := status.Convert(err).Message()
	for _, c := range []string{"waiting for the listing", "list access points", "CreateAccessPoint", "DescribeAccessPoints"} {
		if strings.Contains(msg, c) {
			return status.Code(err).String() + " " + c
		}
	}
	return status.Code(err).String() + " other"
}
