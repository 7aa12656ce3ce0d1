//go:build cluster

package stack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	opv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// The provisioning storm benchmark (docs/performance.md, "Provisioning storm"), a subtest of
// TestOperatorInstallsTheDriver. `go tool mage test` runs the reduced storm (50 claims); the full one is on demand:
//
//	go test -tags cluster -run 'TestOperatorInstallsTheDriver/(operator_ready|driver_ready|provisioning_storm)$' -timeout 60m ./suites/stack/ -storm.pvcs=500
//
// It measures, it does not assert on time: what fails the test is a claim never Bound or never deleted, two access
// points sharing a GID, or an access point left behind.
var (
	stormPVCs    = flag.Int("storm.pvcs", 50, "claims the provisioning storm creates at once")
	stormThreads = flag.String("storm.threads", "1,"+shippedProvisionerSetting, "comma-separated csi-provisioner settings the storm compares, each --worker-threads[:--kube-api-qps] (the burst is twice the QPS; no QPS: csi-provisioner's default, 5)")
	stormLatency = flag.Duration("storm.aws-latency", 20*time.Millisecond, "latency efs-standin adds to every AWS call")
	stormOut     = flag.String("storm.out", "", "file to write the storm's results to (JSON)")
)

// shippedProvisionerSetting is csi-provisioner's --worker-threads[:--kube-api-qps] in
// operator/assets/driver/controller.yaml.
const shippedProvisionerSetting = "10"

// stormResult is one storm at one --worker-threads setting.
type stormResult struct {
	WorkerThreads int `json:"workerThreads"`
	// KubeAPIQPS is csi-provisioner's --kube-api-qps, 0 for its default (5).
	KubeAPIQPS    int     `json:"kubeAPIQPS"`
	PVCs          int     `json:"pvcs"`
	AWSLatency    string  `json:"awsLatency"`
	BoundSeconds  float64 `json:"boundSeconds"`
	DeleteSeconds float64 `json:"deleteSeconds"`
	// BoundPerSecond and DeletedPerSecond are claims per second.
	BoundPerSecond   float64 `json:"boundPerSecond"`
	DeletedPerSecond float64 `json:"deletedPerSecond"`
	// CreateCalls and DeleteCalls are fakeaws' calls per operation during each phase.
	CreateCalls map[string]int `json:"createCalls"`
	DeleteCalls map[string]int `json:"deleteCalls"`
	// CreateCallsPerPVC and DeleteCallsPerPVC are all calls of the phase divided by the claims.
	CreateCallsPerPVC float64 `json:"createCallsPerPVC"`
	DeleteCallsPerPVC float64 `json:"deleteCallsPerPVC"`
	// LoadBefore and LoadAfter are /proc/loadavg when the phase started and when it ended.
	LoadBefore string `json:"loadBefore"`
	LoadAfter  string `json:"loadAfter"`
}

// provisioningStorm adds latency to every AWS call of efs-standin, then, for each --worker-threads setting of
// csi-provisioner, creates the claims at once and measures the time until all are Bound, then deletes them and
// measures the time until every PersistentVolume is gone. After each storm no two access points may share a GID,
// and after the deletion none of the storm's may be left. At the end the latency is cleared and the
// ClusterCSIDriver is Managed again, the operator restoring the shipped controller Deployment.
//
// The setting is changed the way an administrator would: the ClusterCSIDriver is set Unmanaged (the operator
// leaves the Deployment alone) and the Deployment's csi-provisioner arguments are edited. The controller's
// --delete-access-point-root-dir is turned off for the storm, so the deletion time is that of csi-provisioner and
// DeleteAccessPoint: with it, every deletion is also a TLS mount of the file system root (a stunnel each), which on
// this 2-core machine would measure stunnel start-up; the access point deletion subtest runs the root directory's
// removal.
func (s *stack) provisioningStorm(t *testing.T) {
	type setting struct{ threads, qps int }
	var settings []setting
	for _, f := range strings.Split(*stormThreads, ",") {
		th, q, withQPS := strings.Cut(strings.TrimSpace(f), ":")
		n, err := strconv.Atoi(th)
		qps := 0
		if withQPS {
			qps, err = strconv.Atoi(q)
			if qps < 1 {
				err = errors.New("QPS < 1")
			}
		}
		if err != nil || n < 1 {
			t.Fatalf("-storm.threads %q: want comma-separated --worker-threads[:--kube-api-qps] settings, numbers >= 1, e.g. 1,10,10:50", *stormThreads)
		}
		settings = append(settings, setting{n, qps})
	}
	if *stormPVCs < 1 {
		t.Fatalf("-storm.pvcs %d: want a number >= 1", *stormPVCs)
	}
	if err := s.aws.setFaults(t.Context(), "*:latency="+stormLatency.String()); err != nil {
		t.Fatal(err)
	}
	s.setManagementState(t, opv1.Unmanaged)
	defer func() {
		if err := s.aws.setFaults(context.WithoutCancel(t.Context()), "*:latency=0s"); err != nil {
			t.Error(err)
		}
		s.setManagementState(t, opv1.Managed)
		eventually(t, 2*time.Minute, "the operator restoring the shipped controller Deployment", func(ctx context.Context) error {
			d, err := s.kube.AppsV1().Deployments(namespace).Get(ctx, controllerName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.Name == "csi-driver" && !slices.Contains(c.Args, "--delete-access-point-root-dir=true") {
					return fmt.Errorf("csi-driver args %v", c.Args)
				}
			}
			return nil
		})
		s.waitDeployment(t, controllerName, 5*time.Minute)
		s.handOverProvisionerLease(t)
	}()

	// Many requests at once: client-go's default of 5 per second would measure this client, not the driver.
	cfg := *s.c.Config
	cfg.QPS, cfg.Burst = 500, 1000
	kube, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.createStormStorageClass(t)
	ap := s.efsClient(t)

	var results []stormResult
	for _, set := range settings {
		n := set.threads
		name := fmt.Sprintf("worker-threads=%d", n)
		flags := map[string]string{"--worker-threads": strconv.Itoa(n),
			"--leader-election-lease-duration": "15s", "--leader-election-renew-deadline": "10s", "--leader-election-retry-period": "2s"}
		// csi-provisioner's defaults unless the setting names a QPS (set every time: the Deployment keeps the
		// previous setting's flags).
		qps := 5
		if set.qps > 0 {
			name += fmt.Sprintf(",kube-api-qps=%d", set.qps)
			qps = set.qps
		}
		flags["--kube-api-qps"], flags["--kube-api-burst"] = strconv.Itoa(qps), strconv.Itoa(2*qps)
		ok := t.Run(name, func(t *testing.T) {
			// A short leader lease: the new csi-provisioner takes over from the one the rollout stopped (which
			// does not release its lease) within seconds instead of the shipped 137 s; it does not change
			// provisioning.
			s.setControllerArgs(t, flags, map[string]string{"--delete-access-point-root-dir": "false"})
			s.waitDeployment(t, controllerName, 5*time.Minute)
			s.handOverProvisionerLease(t)
			// One claim through and back first: the new csi-provisioner holds the leader lease and the
			// driver's caches are filled, so the storm measures provisioning, not the rollout.
			s.storm(t, kube, ap, "warm", 1, n)
			r := s.storm(t, kube, ap, "storm", *stormPVCs, n)
			r.KubeAPIQPS = set.qps
			results = append(results, r)
			t.Logf("%s: %d claims Bound in %.1f s (%.1f/s), deleted in %.1f s (%.1f/s); EFS calls per claim: create %.2f %v, delete %.2f %v; load %s -> %s",
				name, r.PVCs, r.BoundSeconds, r.BoundPerSecond, r.DeleteSeconds, r.DeletedPerSecond,
				r.CreateCallsPerPVC, r.CreateCalls, r.DeleteCallsPerPVC, r.DeleteCalls, r.LoadBefore, r.LoadAfter)
		})
		if !ok {
			break
		}
	}
	if len(results) > 1 {
		base := results[0]
		for _, r := range results[1:] {
			t.Logf("worker-threads=%d kube-api-qps=%d against worker-threads=%d kube-api-qps=%d: Bound %.2fx as fast, deleted %.2fx as fast",
				r.WorkerThreads, r.KubeAPIQPS, base.WorkerThreads, base.KubeAPIQPS,
				base.BoundSeconds/r.BoundSeconds, base.DeleteSeconds/r.DeleteSeconds)
		}
	}
	if *stormOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"cpus": runtime.NumCPU(), "results": results}, "", "  ")
		if err := os.WriteFile(*stormOut, b, 0o644); err != nil {
			t.Error(err)
		}
	}
}

const stormClass = "efs-storm"

// provisionerLease is csi-provisioner's leader-election lease (named after the driver).
const provisionerLease = "efs-csi-aws-com"

// handOverProvisionerLease deletes csi-provisioner's lease once a rollout has stopped the old controller pod: the
// stopped csi-provisioner does not release it, and the new one would wait for it to expire (137 s as shipped)
// before provisioning. An administrator's delete hands it over at once; the storm measures provisioning, not that.
func (s *stack) handOverProvisionerLease(t *testing.T) {
	t.Helper()
	if err := s.kube.CoordinationV1().Leases(namespace).Delete(t.Context(), provisionerLease, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// createStormStorageClass creates a StorageClass with the default dynamic-provisioning parameters.
func (s *stack) createStormStorageClass(t *testing.T) {
	t.Helper()
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: stormClass},
		Provisioner: driverName,
		Parameters:  map[string]string{"provisioningMode": "efs-ap", "fileSystemId": s.aws.RegionalFileSystemID, "directoryPerms": "700"},
	}
	if _, err := s.kube.StorageV1().StorageClasses().Create(t.Context(), sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// storm creates n claims at once, waits until all are Bound, checks the access points' GIDs, deletes the claims
// and waits until their PersistentVolumes are gone and none of the access points they made is left. The volumes
// of the other subtests stay, and their access points count in the GID check.
func (s *stack) storm(t *testing.T, kube kubernetes.Interface, ap *efs.Client, prefix string, n, threads int) stormResult {
	t.Helper()
	r := stormResult{WorkerThreads: threads, PVCs: n, AWSLatency: stormLatency.String()}
	before := accessPoints(t, ap, s.aws.RegionalFileSystemID)
	s.resetCalls(t)
	r.LoadBefore = loadavg()
	start := time.Now()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	class := stormClass
	parallel(t, names, func(ctx context.Context, name string) error {
		_, err := kube.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"storm": prefix}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, StorageClassName: &class,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
			},
		}, metav1.CreateOptions{})
		return err
	})
	pollUntil(t, 30*time.Minute, fmt.Sprintf("%d claims Bound", n), func(ctx context.Context) error {
		list, err := kube.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{LabelSelector: "storm=" + prefix})
		if err != nil {
			return err
		}
		bound := 0
		for _, c := range list.Items {
			if c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		if bound < n {
			return fmt.Errorf("%d of %d Bound", bound, n)
		}
		return nil
	})
	r.BoundSeconds = time.Since(start).Seconds()
	r.BoundPerSecond = float64(n) / r.BoundSeconds
	r.CreateCalls = s.callsNow(t)
	r.CreateCallsPerPVC = float64(totalCalls(r.CreateCalls)) / float64(n)
	aps := accessPoints(t, ap, s.aws.RegionalFileSystemID)
	if made := len(newAccessPoints(before, aps)); made != n {
		t.Errorf("%d new access points on %s after %d claims were Bound, want %d", made, s.aws.RegionalFileSystemID, n, n)
	}
	byGID := map[int64][]string{}
	for id, gid := range aps {
		byGID[gid] = append(byGID[gid], id)
	}
	for gid, ids := range byGID {
		if len(ids) > 1 {
			sort.Strings(ids)
			t.Errorf("GID %d is shared by access points %v", gid, ids)
		}
	}

	s.resetCalls(t)
	start = time.Now()
	parallel(t, names, func(ctx context.Context, name string) error {
		return kube.CoreV1().PersistentVolumeClaims("default").Delete(ctx, name, metav1.DeleteOptions{})
	})
	pollUntil(t, 30*time.Minute, fmt.Sprintf("the %d PersistentVolumes deleted", n), func(ctx context.Context) error {
		list, err := kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		left := 0
		for _, pv := range list.Items {
			if pv.Spec.StorageClassName == stormClass {
				left++
			}
		}
		if left > 0 {
			return fmt.Errorf("%d left", left)
		}
		return nil
	})
	r.DeleteSeconds = time.Since(start).Seconds()
	r.DeletedPerSecond = float64(n) / r.DeleteSeconds
	r.LoadAfter = loadavg()
	r.DeleteCalls = s.callsNow(t)
	r.DeleteCallsPerPVC = float64(totalCalls(r.DeleteCalls)) / float64(n)
	if left := newAccessPoints(before, accessPoints(t, ap, s.aws.RegionalFileSystemID)); len(left) > 0 {
		t.Errorf("%d access points leaked after every PersistentVolume was deleted: %v", len(left), left)
	}
	return r
}

// newAccessPoints returns the IDs in after that are not in before, sorted.
func newAccessPoints(before, after map[string]int64) []string {
	var out []string
	for id := range after {
		if _, ok := before[id]; !ok {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// setControllerArgs sets flags of the controller Deployment's csi-provisioner (provisioner) and csi-driver
// (driver) containers, each "--name" to "value", replacing the flag's current value.
func (s *stack) setControllerArgs(t *testing.T, provisioner, driver map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		d, err := s.kube.AppsV1().Deployments(namespace).Get(t.Context(), controllerName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[i]
			switch c.Name {
			case "csi-provisioner":
				c.Args = withFlags(c.Args, provisioner)
			case "csi-driver":
				c.Args = withFlags(c.Args, driver)
			}
		}
		_, err = s.kube.AppsV1().Deployments(namespace).Update(t.Context(), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("setting the controller's flags: %v", err)
	}
}

// withFlags returns args with every flag of set given its value: replaced where present, appended otherwise.
func withFlags(args []string, set map[string]string) []string {
	out := make([]string, 0, len(args)+len(set))
	done := map[string]bool{}
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if v, ok := set[name]; ok {
			out = append(out, name+"="+v)
			done[name] = true
			continue
		}
		out = append(out, a)
	}
	var rest []string
	for name := range set {
		if !done[name] {
			rest = append(rest, name+"="+set[name])
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// efsClient is an EFS client of efs-standin's fakeaws (over HTTPS, trusting its CA).
func (s *stack) efsClient(t *testing.T) *efs.Client {
	t.Helper()
	pem, err := os.ReadFile(s.aws.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s: no certificate", s.aws.CAFile)
	}
	return efs.New(efs.Options{
		Region:       s.aws.Region,
		BaseEndpoint: aws.String(s.aws.AWSEndpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDSTORM", "storm", ""),
		HTTPClient:   &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: time.Minute},
	})
}

// accessPoints returns the GID of every access point of the file system, by ID, read from fakeaws. fakeaws counts
// these calls too: storm reads the counts before it lists and resets them after.
func accessPoints(t *testing.T, c *efs.Client, fsID string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	p := efs.NewDescribeAccessPointsPaginator(c, &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatalf("listing the access points of %s: %v", fsID, err)
		}
		for _, a := range page.AccessPoints {
			gid := int64(-1)
			if a.PosixUser != nil && a.PosixUser.Gid != nil {
				gid = *a.PosixUser.Gid
			}
			out[aws.ToString(a.AccessPointId)] = gid
		}
	}
	return out
}

func (s *stack) resetCalls(t *testing.T) {
	t.Helper()
	if err := s.aws.post(t.Context(), "/calls/reset", ""); err != nil {
		t.Fatal(err)
	}
}

func (s *stack) callsNow(t *testing.T) map[string]int {
	t.Helper()
	c, err := s.aws.calls(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// totalCalls is the sum of fakeaws' calls per operation (a "*" total, if given, is not added again).
func totalCalls(calls map[string]int) int {
	n := 0
	for op, c := range calls {
		if op != "*" {
			n += c
		}
	}
	return n
}

// parallel runs do for every name, at most 50 at a time, and fails the test with the errors.
func parallel(t *testing.T, names []string, do func(ctx context.Context, name string) error) {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, 50)
	for _, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := do(t.Context(), name); err != nil && !apierrors.IsNotFound(err) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// pollUntil is eventually with a finer poll, so that the measured times are not rounded up to whole seconds.
func pollUntil(t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check(t.Context())
		if err == nil {
			return
		}
		if time.Now().After(deadline) || t.Context().Err() != nil {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// loadavg is the machine's load (/proc/loadavg's first three fields): the storm shares two cores with whatever
// else runs.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
