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

// runFaults is the fault scenario: a fresh controller (no GID view yet), 5,000 access points, 20%
// throttling and 5% server errors on every EFS call, 20 ms latency, creates by 16 callers that each give a call
// 15 s (csi-provisioner's timeout) and retry a failed call after 1 s, as the provisioner does.
//
// listLatency, when set, is the latency of each DescribeAccessPoints page instead (a slow listing: five pages at
// 4 s take longer than the provisioner's 15 s).
func runFaults(tb testing.TB, creates int, listLatency time.Duration) faultResult {
	tb.Helper()
	tb.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEAWSPERF00001")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := fakeaws.Start(fakeaws.Options{AccessPointQuota: 10000})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	fsID := s.AddFileSystem(fakeaws.FileSystem{})
	for i := range 5000 {
		s.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: fsID, PosixUser: &fakeaws.PosixUser{Uid: int64(50000 + i), Gid: int64(50000 + i)},
			RootDirectory: fakeaws.RootDirectory{Path: fmt.Sprintf("/old-%d", i)}})
	}
	client := startDriver(tb, s, time.Minute)
	s.SetFault("*", fakeaws.Fault{Latency: 20 * time.Millisecond, ThrottleProbability: 0.2, ErrorProbability: 0.05})
	if listLatency > 0 {
		s.SetFault("DescribeAccessPoints", fakeaws.Fault{Latency: listLatency, ThrottleProbability: 0.2, ErrorProbability: 0.05})
	}

	var (
		mu       sync.Mutex
		r        faultResult
		failedAt []time.Time
	)
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				for attempt := 0; ; attempt++ {
					ctx, cancel := context.WithTimeout(tb.Context(), provisionerTimeout)
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
					if time.Since(start) > 3*time.Minute {
						mu.Lock()
						r.gaveUp++
						mu.Unlock()
						break
					}
					time.Sleep(time.Second)
				}
			}
		}()
	}
	for i := range creates {
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

// BenchmarkCreateVolumeUnderFaults runs the fault scenario: 200 creates with 20 ms per call, and 32 creates with a
// slow listing (4 s per page). Run it with:
//
//	go test ./test/perf -run '^$' -bench BenchmarkCreateVolumeUnderFaults -benchtime 1x
func BenchmarkCreateVolumeUnderFaults(b *testing.B) {
	b.Run("20ms", func(b *testing.B) { benchFaults(b, 200, 0) })
	b.Run("slow-listing", func(b *testing.B) { benchFaults(b, 32, 4*time.Second) })
}

func benchFaults(b *testing.B, creates int, listLatency time.Duration) {
	for b.Loop() {
		r := runFaults(b, creates, listLatency)
		if r.duplicateGIDs != 0 {
			b.Fatalf("%d duplicate GIDs", r.duplicateGIDs)
		}
		b.ReportMetric(float64(r.firstAttemptFailures), "first-attempt-failures")
		b.ReportMetric(float64(r.deadlineFailures), "deadline-exceeded")
		b.ReportMetric(float64(r.largestBurst), "largest-failure-burst/s")
		b.ReportMetric(float64(r.calls)/float64(creates), "calls/create")
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
