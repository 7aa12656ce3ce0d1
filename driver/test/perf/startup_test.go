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
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/driver"
	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// startLoad is one scripted start-up run.
type startLoad struct {
	creates, callers int
	latency          time.Duration // added to every AWS call, instance metadata included
}

// startResult counts the run's outcomes; failures are by message.
type startResult struct {
	ok       int
	failures map[string]int
	untilAll time.Duration // from Probe's first ready answer to the last reply
}

// runStartUp is the scenario of issue 26 item 10: the controller serves its socket at once (Probe ready) and
// initialises its AWS access the way cmd/aws-efs-csi-driver does (instance metadata for region and zone, then the
// clients), against fakeaws with latency on every call; a csi-provisioner stand-in sends its CreateVolume calls
// as soon as Probe first answers ready, each with csi-provisioner's default 15 s deadline.
func runStartUp(tb testing.TB, l startLoad) startResult {
	tb.Helper()
	tb.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEAWSPERF00001")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	s, err := fakeaws.Start(fakeaws.Options{AccessPointQuota: 10000})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	fsID := s.AddFileSystem(fakeaws.FileSystem{})
	s.SetFault("*", fakeaws.Fault{Latency: l.latency})
	ctrl := driver.NewController(driver.ControllerConfig{Provisioner: provision.New(provision.Config{GIDs: gidalloc.New(time.Minute, nil)})})
	ctx, cancel := context.WithCancel(tb.Context())
	defer cancel()
	conn := serve(tb, ctx, ctrl)
	initDone := make(chan struct{})
	go func() {
		defer close(initDone)
		if err := initLikeCmd(ctx, s.URL(), ctrl); err != nil {
			ctrl.SetInitError(err)
		}
	}()
	id := csi.NewIdentityClient(conn)
	for {
		resp, err := id.Probe(ctx, &csi.ProbeRequest{})
		if err == nil && resp.GetReady().GetValue() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	client := csi.NewControllerClient(conn)
	var (
		next, ok atomic.Int64
		mu       sync.Mutex
		failures = map[string]int{}
		wg       sync.WaitGroup
	)
	for range l.callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < l.creates; i = int(next.Add(1)) - 1 {
				rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
				_, err := client.CreateVolume(rctx, &csi.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%06d", i),
					Parameters: map[string]string{"provisioningMode": "efs-ap", "fileSystemId": fsID, "directoryPerms": "700"},
					VolumeCapabilities: []*csi.VolumeCapability{{
						AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
						AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}}})
				rcancel()
				if err != nil {
					st, _ := status.FromError(err)
					mu.Lock()
					failures[st.Code().String()+": "+st.Message()]++
					mu.Unlock()
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	r := startResult{ok: int(ok.Load()), failures: failures, untilAll: time.Since(start)}
	<-initDone
	return r
}

// initLikeCmd is cmd/aws-efs-csi-driver's initControllerOnce with the instance metadata endpoint pointed at fakeaws.
func initLikeCmd(ctx context.Context, endpoint string, ctrl *driver.Controller) error {
	imdsClient, err := cloud.NewIMDSClient(ctx, endpoint)
	if err != nil {
		return err
	}
	md, err := cloud.ResolveMetadata(ctx, cloud.MetadataInput{}, imdsClient)
	if err != nil {
		return err
	}
	p, err := cloud.NewProvider(ctx, cloud.Options{Region: md.Region, Endpoint: endpoint, Retry: cloud.RetryOptions{Adaptive: true}})
	if err != nil {
		return err
	}
	ctrl.SetZoneID(md.ZoneID)
	ctrl.SetClouds(p)
	return nil
}

func serve(tb testing.TB, ctx context.Context, ctrl *driver.Controller) *grpc.ClientConn {
	tb.Helper()
	sock := filepath.Join(tb.TempDir(), "csi.sock")
	lis, err := driver.Listen("unix://" + sock)
	if err != nil {
		tb.Fatal(err)
	}
	srv := driver.NewServer(driver.Services{Identity: driver.NewIdentity("perf", true), Controller: ctrl}, nil)
	done := make(chan error, 1)
	go func() { done <- driver.Serve(ctx, srv, lis) }()
	tb.Cleanup(func() { srv.Stop(); <-done })
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestCreateVolumeRightAfterProbeSmoke is a small run of the start-up scenario in every `go test`: no request may
// fail because the controller was still initialising.
func TestCreateVolumeRightAfterProbeSmoke(t *testing.T) {
	l := startLoad{creates: 200, callers: 16, latency: 20 * time.Millisecond}
	r := runStartUp(t, l)
	if r.ok != l.creates {
		t.Fatalf("%d of %d CreateVolume succeeded; failures: %v", r.ok, l.creates, r.failures)
	}
	t.Logf("%d CreateVolume from %d callers right after Probe: %d succeeded, 0 failed, all answered in %s", l.creates, l.callers, r.ok, r.untilAll.Round(time.Millisecond))
}

// BenchmarkCreateVolumeRightAfterProbe is the measurement: 1,000 CreateVolume from 16 callers right after
// Probe first answers ready, 20 ms on every AWS call. Run it with:
//
//	go test ./test/perf -run '^$' -bench BenchmarkCreateVolumeRightAfterProbe -benchtime 1x
func BenchmarkCreateVolumeRightAfterProbe(b *testing.B) {
	l := startLoad{creates: 1000, callers: 16, latency: 20 * time.Millisecond}
	for b.Loop() {
		r := runStartUp(b, l)
		b.ReportMetric(float64(l.creates-r.ok), "failed-creates")
		b.ReportMetric(r.untilAll.Seconds(), "s-until-all-answered")
		if r.ok != l.creates {
			b.Fatalf("%d of %d CreateVolume succeeded; failures: %v", r.ok, l.creates, r.failures)
		}
	}
}
