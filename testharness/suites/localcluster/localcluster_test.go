//go:build cluster

package localcluster

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// bins is the Kubernetes set, built once per test process; nil with -short.
var bins *cluster.Binaries

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		tools, err := cluster.ToolsDir(os.Getenv)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
			var b cluster.Binaries
			b, err = cluster.Build(ctx, tools, os.Stderr)
			cancel()
			bins = &b
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: building Kubernetes: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// needHost fails the test when the machine cannot run a node, naming what to install (`go tool mage test`
// installs it on Debian).
func needHost(t *testing.T) {
	t.Helper()
	if bins == nil {
		t.Skip("the local cluster needs the Kubernetes binaries, which -short does not build")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the local cluster runs containers: run the test as root")
	}
	for _, p := range []string{"/usr/bin/containerd", "/usr/bin/containerd-shim-runc-v2", "/usr/bin/ctr", cniBinDir + "/bridge", cniBinDir + "/host-local", cniBinDir + "/loopback"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: apt-get install -y --no-install-recommends containerd runc containernetworking-plugins iproute2 iptables", p)
		}
	}
}

// TestPodRunsAndNothingIsLeftBehind starts the cluster, runs a pod on the pod network, reads its log through the
// API server (API server → kubelet → containerd), deletes it, then stops the cluster with a second pod still
// running and checks that nothing of the cluster is left on the machine.
func TestPodRunsAndNothingIsLeftBehind(t *testing.T) {
	needHost(t)
	ctx := t.Context()
	dir := t.TempDir()
	var log strings.Builder
	c, err := Start(ctx, Options{Dir: dir, Binaries: *bins, Log: testWriter{t}})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if t.Failed() && !stopped {
			c.Diagnose(context.WithoutCancel(ctx), &log)
			t.Log(log.String())
		}
		if !stopped {
			_ = c.Stop()
		}
	})
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	s := *c.state

	// Host-network pods (the driver's) reach the API server as in-cluster clients do: the kubernetes Service.
	inCluster := rest.CopyConfig(c.Config)
	inCluster.Host = "https://" + kubernetesServiceIP + ":443"
	viaService, err := kubernetes.NewForConfig(inCluster)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := viaService.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil || string(body) != "ok" {
		t.Errorf("GET https://%s:443/readyz from the host = %q, %v; want ok", kubernetesServiceIP, body, err)
	}

	first := runPod(t, c, kube, "first")
	ip := net.ParseIP(first.Status.PodIP)
	_, subnet, _ := net.ParseCIDR(s.Subnet)
	if ip == nil || !subnet.Contains(ip) {
		t.Errorf("pod IP %q is not in the pod network %s", first.Status.PodIP, s.Subnet)
	}
	logs, err := kube.CoreV1().Pods("default").GetLogs("first", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(logs), "pause: started") {
		t.Errorf("pod log through the API server = %q, %v; want it to contain %q", logs, err, "pause: started")
	}
	zero := int64(0)
	if err := kube.CoreV1().Pods("default").Delete(ctx, "first", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Pods("default").Get(ctx, "first", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("pod first not gone after deletion: %v", err)
	}

	runPod(t, c, kube, "second")
	mountsBefore, _ := mountsUnder(dir, kubeletRoot)
	if len(mountsBefore) == 0 {
		t.Error("no mounts under the cluster directory while a pod runs; the leak check below would prove nothing")
	}
	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	stopped = true
	assertNothingLeft(t, &s)
}

// TestPodsReachServices checks the Services of the pod network (kube-proxy and the harness's rules for the
// kubernetes Service): a pod authenticates to the API server as an in-cluster client (the kubernetes Service,
// its service account token), and reaches another pod through a ClusterIP Service. The cluster then stops with
// the Services programmed, and nothing of kube-proxy may be left in iptables.
func TestPodsReachServices(t *testing.T) {
	needHost(t)
	ctx := t.Context()
	routeLocalnet, err := os.ReadFile("/proc/sys/net/ipv4/conf/all/route_localnet")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(ctx, Options{Dir: t.TempDir(), Binaries: *bins, Log: testWriter{t}})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if t.Failed() && !stopped {
			var b strings.Builder
			c.Diagnose(context.WithoutCancel(ctx), &b)
			t.Log(b.String())
		}
		if !stopped {
			_ = c.Stop()
		}
	})
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	s := *c.state
	if err := c.LoadNetcheck(ctx, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	netcheckPod := func(name string, labels map[string]string, restart corev1.RestartPolicy, args ...string) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
			Spec: corev1.PodSpec{
				RestartPolicy: restart,
				Containers: []corev1.Container{{
					Name: "netcheck", Image: NetcheckImage, ImagePullPolicy: corev1.PullNever, Args: args,
				}},
			},
		}
		if _, err := kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", name, err)
		}
	}
	netcheckPod("server", map[string]string{"app": "netcheck-server"}, corev1.RestartPolicyAlways, "serve", "8080")
	svc, err := kube.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "netcheck", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "netcheck-server"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	netcheckPod("whoami", nil, corev1.RestartPolicyNever, "whoami")
	netcheckPod("client", nil, corev1.RestartPolicyNever, "get", "http://"+svc.Spec.ClusterIP+":80/")

	for name, want := range map[string]string{
		"whoami": "netcheck: https://" + kubernetesServiceIP + ":443 is system:serviceaccount:default:default",
		"client": "netcheck server",
	} {
		log, phase := waitPodDone(t, kube, name)
		if phase != corev1.PodSucceeded || !strings.Contains(log, want) {
			t.Errorf("pod %s: phase %s, log:\n%s\nwant it to succeed and print %q", name, phase, log, want)
		}
	}
	server, err := kube.CoreV1().Pods("default").Get(ctx, "server", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if server.Spec.HostNetwork || server.Status.PodIP == "" {
		t.Errorf("server pod: hostNetwork %t, IP %q; want a pod on the pod network", server.Spec.HostNetwork, server.Status.PodIP)
	}

	if chains := proxyChains(); len(chains) == 0 {
		t.Error("no KUBE-* chains while Services exist: the leak check below would prove nothing")
	}
	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	stopped = true
	assertNothingLeft(t, &s)
	if after, _ := os.ReadFile("/proc/sys/net/ipv4/conf/all/route_localnet"); string(after) != string(routeLocalnet) {
		t.Errorf("net.ipv4.conf.all.route_localnet changed from %q to %q", routeLocalnet, after)
	}
}

// waitPodDone waits until the pod has succeeded or failed and returns its log and phase.
func waitPodDone(t *testing.T, kube kubernetes.Interface, name string) (string, corev1.PodPhase) {
	t.Helper()
	ctx := t.Context()
	var phase corev1.PodPhase
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	logs, _ := kube.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Errorf("pod %s not done: %v", name, err)
	}
	return string(logs), phase
}

// TestSidecarImagesRun builds the upstream sidecars from the Go module proxy, loads their images and runs each
// as a pod that prints its version: the binaries are static and the images start.
func TestSidecarImagesRun(t *testing.T) {
	needHost(t)
	ctx := t.Context()
	c, kube := startCluster(t)
	tools, err := cluster.ToolsDir(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.LoadSidecars(ctx, tools, testWriter{t}); err != nil {
		t.Fatalf("loading the sidecars: %v", err)
	}
	type run struct{ name, image, arg, want string }
	var runs []run
	for _, tool := range Sidecars {
		want := ""
		if tool.VersionVar != "" {
			want = tool.Version
		}
		runs = append(runs, run{tool.Name, SidecarImage(tool), "--version", want})
	}
	for _, s := range StandIns {
		runs = append(runs, run{s.Name + "-standin", StandInImage(s), "-h", "-csi-address"})
	}
	for _, r := range runs {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: "default"},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "main", Image: r.image, ImagePullPolicy: corev1.PullNever, Args: []string{r.arg},
				}},
			},
		}
		if _, err := kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range runs {
		var phase corev1.PodPhase
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			p, err := kube.CoreV1().Pods("default").Get(ctx, r.name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			phase = p.Status.Phase
			return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
		})
		logs, _ := kube.CoreV1().Pods("default").GetLogs(r.name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil || phase != corev1.PodSucceeded {
			t.Errorf("%s %s: phase %s, %v; log:\n%s", r.image, r.arg, phase, err, logs)
		} else if !strings.Contains(string(logs), r.want) {
			t.Errorf("%s %s printed %q; want %q in it", r.image, r.arg, logs, r.want)
		}
	}
}

// startCluster starts a cluster that is stopped (after diagnostics when the test failed) at the end of the test.
func startCluster(t *testing.T) (*Cluster, kubernetes.Interface) {
	t.Helper()
	c, err := Start(t.Context(), Options{Dir: t.TempDir(), Binaries: *bins, Log: testWriter{t}})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			c.Diagnose(context.WithoutCancel(t.Context()), &b)
			t.Log(b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the local cluster: %v", err)
		}
	})
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c, kube
}

// runPod runs the pause image as a pod and waits until it is Ready.
func runPod(t *testing.T, c *Cluster, kube kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "pause", Image: PauseImage, ImagePullPolicy: corev1.PullNever,
			}},
		},
	}
	if _, err := kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if got, err = kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, c.checkRunning()
	})
	if err != nil {
		t.Fatalf("pod %s not Ready: %v", name, err)
	}
	return got
}

// assertNothingLeft checks the machine for every kind of thing the cluster makes outside its directory.
func assertNothingLeft(t *testing.T, s *state) {
	t.Helper()
	for _, p := range s.Processes {
		if gone, _ := p.Exited(); !gone {
			t.Errorf("%s (pid %d) still runs", p.Name, p.PID)
		}
	}
	if pids := processesWithArg("-address", s.ContainerdSocket); len(pids) > 0 {
		t.Errorf("containerd shims still run: %v", pids)
	}
	if ms, _ := mountsUnder(s.Dir, kubeletRoot); len(ms) > 0 {
		t.Errorf("still mounted under the cluster directory or the kubelet's root: %v", ms)
	}
	for _, p := range s.Created {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s, created by the cluster, left behind", p)
		}
	}
	hs, _ := cgroupHierarchies(true)
	for _, h := range hs {
		if _, err := os.Stat(filepath.Join(h, s.CgroupRoot)); err == nil {
			t.Errorf("cgroup %s left behind", filepath.Join(h, s.CgroupRoot))
		}
	}
	if _, err := os.Stat("/sys/class/net/" + s.Bridge); err == nil {
		t.Errorf("bridge %s left behind", s.Bridge)
	}
	before := map[string]bool{}
	for _, n := range s.NetNSBefore {
		before[n] = true
	}
	for _, n := range listDir("/var/run/netns") {
		if !before[n] {
			t.Errorf("network namespace /var/run/netns/%s left behind", n)
		}
	}
	if entries := cniCacheEntries(s.Network); len(entries) > 0 {
		t.Errorf("CNI cache entries left behind: %v", entries)
	}
	for _, n := range listDir("/var/log/containers") {
		if target, _ := os.Readlink(filepath.Join("/var/log/containers", n)); strings.HasPrefix(target, s.Dir+"/") {
			t.Errorf("container log link /var/log/containers/%s left behind", n)
		}
	}
	if chains := proxyChains(); len(chains) > 0 {
		t.Errorf("kube-proxy's iptables chains left behind: %v", chains)
	}
	if out, err := exec.Command("iptables-save").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, s.Bridge) || strings.Contains(line, s.Subnet) || strings.Contains(line, s.RuleComment) {
				t.Errorf("iptables rule of the pod network left behind: %s", line)
			}
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
