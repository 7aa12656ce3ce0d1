package perf

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/driver"
	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// efsOperations are the EFS API operations counted as "EFS calls".
var efsOperations = []string{"CreateAccessPoint", "DescribeAccessPoints", "DeleteAccessPoint", "DescribeFileSystems",
	"DescribeMountTargets", "TagResource", "ListTagsForResource"}

// load is one scenario.
type load struct {
	existing   int           // access points on the file system before the run (GIDs 50000, 50001, ...)
	creates    int           // CreateVolume calls
	callers    int           // concurrent callers
	latency    time.Duration // added to every AWS call
	resync     time.Duration // the controller's --gid-resync-period
	behindBack int           // access points created and deleted directly on fakeaws during the run
}

// result is what a scenario measured.
type result struct {
	efsCalls      int
	duplicateGIDs int
	failures      int
	elapsed       time.Duration
	missing       int // volumes whose access point is not on the file system afterwards
}

func (r result) perCreate(n int) float64 { return float64(r.efsCalls) / float64(n) }

func run(tb testing.TB, l load) result {
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
	var existing []string
	for i := range l.existing {
		existing = append(existing, s.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: fsID,
			PosixUser:     &fakeaws.PosixUser{Uid: int64(50000 + i), Gid: int64(50000 + i)},
			RootDirectory: fakeaws.RootDirectory{Path: fmt.Sprintf("/old-%d", i)}}))
	}
	client := startDriver(tb, s, l.resync)
	s.SetFault("*", fakeaws.Fault{Latency: l.latency})
	s.ResetCalls()

	ctx, cancel := context.WithCancel(tb.Context())
	// The other client starts once the driver has its view of the file system (its first volume exists): what it
	// does is then behind the driver's back. Before that, a GID it frees and takes again would be free in the
	// driver's first listing too, and two allocators taking the lowest free GID at once collide whoever they are.
	firstCreated := make(chan struct{})
	var firstOnce sync.Once
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		select {
		case <-firstCreated:
			behindTheBack(ctx, s, fsID, existing, l.behindBack)
		case <-ctx.Done():
		}
	}()

	var next, failures atomic.Int64
	ids := make([]string, l.creates)
	start := time.Now()
	var wg sync.WaitGroup
	for range l.callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < l.creates; i = int(next.Add(1)) - 1 {
				resp, err := client.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%06d", i),
					Parameters: map[string]string{"provisioningMode": "efs-ap", "fileSystemId": fsID, "directoryPerms": "700"},
					VolumeCapabilities: []*csi.VolumeCapability{{
						AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
						AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}}})
				if err != nil {
					failures.Add(1)
					tb.Errorf("CreateVolume %d: %v", i, err)
					continue
				}
				ids[i] = resp.GetVolume().GetVolumeId()
				firstOnce.Do(func() { close(firstCreated) })
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cancel()
	bg.Wait()

	r := result{failures: int(failures.Load()), elapsed: elapsed}
	for _, op := range efsOperations {
		r.efsCalls += s.Calls(op)
	}
	seen := map[int64]bool{}
	onFS := map[string]bool{}
	for _, ap := range s.AccessPoints(fsID) {
		onFS[ap.AccessPointId] = true
		if ap.PosixUser == nil {
			continue
		}
		if seen[ap.PosixUser.Gid] {
			r.duplicateGIDs++
		}
		seen[ap.PosixUser.Gid] = true
	}
	for _, id := range ids {
		if id == "" || !onFS[id[len(fsID)+2:]] {
			r.missing++
		}
	}
	return r
}

// behindTheBack plays another client of the file system while the driver works: like an upstream driver in another
// cluster, it creates access points with the lowest GID it sees free, and it deletes pre-existing ones.
func behindTheBack(ctx context.Context, s *fakeaws.Server, fsID string, existing []string, n int) {
	if n == 0 {
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.DeleteAccessPointDirect(existing[i*7%len(existing)])
		used := map[int64]bool{}
		for _, ap := range s.AccessPoints(fsID) {
			if ap.PosixUser != nil {
				used[ap.PosixUser.Gid] = true
			}
		}
		gid := int64(50000)
		for used[gid] {
			gid++
		}
		s.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: fsID, PosixUser: &fakeaws.PosixUser{Uid: gid, Gid: gid},
			RootDirectory: fakeaws.RootDirectory{Path: fmt.Sprintf("/other-cluster-%d", i)}})
	}
}

func startDriver(tb testing.TB, s *fakeaws.Server, resync time.Duration) csi.ControllerClient {
	tb.Helper()
	p, err := cloud.NewProvider(tb.Context(), cloud.Options{Region: "us-east-1", Endpoint: s.URL(),
		Retry: cloud.RetryOptions{Adaptive: true}})
	if err != nil {
		tb.Fatal(err)
	}
	ctrl := driver.NewController(driver.ControllerConfig{
		Provisioner: provision.New(provision.Config{GIDs: gidalloc.New(resync, nil)}),
	})
	ctrl.SetClouds(p)
	sock := filepath.Join(tb.TempDir(), "csi.sock")
	lis, err := driver.Listen("unix://" + sock)
	if err != nil {
		tb.Fatal(err)
	}
	srv := driver.NewServer(driver.Services{Identity: driver.NewIdentity("perf", true), Controller: ctrl}, nil)
	ctx, cancel := context.WithCancel(tb.Context())
	done := make(chan error, 1)
	go func() { done <- driver.Serve(ctx, srv, lis) }()
	tb.Cleanup(func() { cancel(); <-done })
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return csi.NewControllerClient(conn)
}

func check(tb testing.TB, l load, r result) {
	tb.Helper()
	if r.failures != 0 || r.missing != 0 || r.duplicateGIDs != 0 {
		tb.Fatalf("%d failed creates, %d volumes without their access point, %d duplicate GIDs; want 0, 0, 0", r.failures, r.missing, r.duplicateGIDs)
	}
	if got := r.perCreate(l.creates); got > 1.2 {
		tb.Fatalf("%.3f EFS calls per CreateVolume (%d calls / %d creates), want <= 1.2", got, r.efsCalls, l.creates)
	}
}

// TestCreateVolumeLoadSmoke is a small run of the benchmark's scenario in every `go test`, so it cannot rot; it
// asserts ratios and correctness, never wall-clock time.
func TestCreateVolumeLoadSmoke(t *testing.T) {
	l := load{existing: 500, creates: 150, callers: 8, latency: 2 * time.Millisecond, resync: 50 * time.Millisecond, behindBack: 5}
	r := run(t, l)
	check(t, l, r)
	t.Logf("%d creates, %d existing, %d callers: %.3f EFS calls per CreateVolume, 0 duplicate GIDs", l.creates, l.existing, l.callers, r.perCreate(l.creates))
}

// BenchmarkCreateVolume is the scenario: default StorageClass parameters, 5,000 access points already on
// the file system, 1,000 creates by 16 callers, 20 ms latency on every EFS call, and another client creating and
// deleting access points during the run. Run it with:
//
//	go test ./test/perf -run '^$' -bench BenchmarkCreateVolume -benchtime 1x
func BenchmarkCreateVolume(b *testing.B) {
	for _, resync := range []time.Duration{time.Minute, 250 * time.Millisecond} {
		b.Run("gid-resync-period="+resync.String(), func(b *testing.B) {
			l := load{existing: 5000, creates: 1000, callers: 16, latency: 20 * time.Millisecond, resync: resync, behindBack: 20}
			for b.Loop() {
				r := run(b, l)
				check(b, l, r)
				b.ReportMetric(r.perCreate(l.creates), "efs-calls/create")
				b.ReportMetric(float64(r.duplicateGIDs), "duplicate-gids")
				b.ReportMetric(float64(l.creates)/r.elapsed.Seconds(), "creates/s")
			}
		})
	}
}
