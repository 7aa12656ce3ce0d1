//go:build cluster

package stack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

// efsStateDir is efs-utils' state directory: the node DaemonSet's hostPath /var/run/efs, the same path on the
// host and in the node container.
const efsStateDir = "/var/run/efs"

// standInMountTable is EFS_UTILS_PROC_MOUNTS in the cluster's driver image (clusterimages.MountStandInEnv): the
// NFS mount table the stand-in's backend keeps, read by efs-utils instead of /proc/mounts.
const standInMountTable = efsStateDir + "/standin-nfs4-mounts"

// relayStateFile matches efs-utils' state file of a TLS mount: fs-<id>.<mount point with dots>.<relay port>.
var relayStateFile = regexp.MustCompile(`^fs-[0-9a-f]+\..*\.([0-9]+)$`)

// nodePluginRestart kills the node plugin's container (SIGKILL to its first process, as an OOM kill or a crash
// would) while an application pod writes to an EFS volume. The kubelet restarts the container; the application's
// mount keeps working, and the new container's watchdog adopts the volume's TLS relay from efs-utils' state file
// (the relay died with the old container's PID namespace) and starts it again on the same port, as efs-utils
// 1.36's watchdog does for a mount that is still mounted. Then the new plugin unpublishes the volume the old one
// published when the pod is deleted.
func (s *stack) nodePluginRestart(t *testing.T) {
	s.mountTableWritable(t)
	// A static volume of the file system root: the node side is the same as for a dynamic one (mount.efs, TLS
	// relay, state file, watchdog), and its files are at a known place in the backing store.
	s.staticRootVolume(t, "node-restart")
	app := s.startWriter(t, "restart-writer", "node-restart")
	r := s.relayOf(t, app)

	pod, id := s.nodeContainer(t)
	pid, err := containerInit(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killing the node plugin container %s (pod %s, host pid %d); relay of %s on port %d, pid %v in the container",
		id, pod, pid, r.state, r.port, r.pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var newID string
	eventually(t, 3*time.Minute, "node plugin container restarted and ready", func(ctx context.Context) error {
		p, err := s.kube.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != "csi-driver" {
				continue
			}
			newID = strings.TrimPrefix(cs.ContainerID, "containerd://")
			if cs.RestartCount < 1 || !cs.Ready || newID == id {
				return fmt.Errorf("csi-driver restarts %d ready %v container %s", cs.RestartCount, cs.Ready, newID)
			}
			return nil
		}
		return errors.New("no csi-driver container status")
	})
	s.relayAdopted(t, r, pod, newID)
	s.stillWrites(t, app)
	relayPID := s.unpublished(t, app, r)
	s.relayCleanedUp(t, r, relayPID, pod, newID)
}

// driverImageRoll rolls the driver to another build outside OLM, as an administrator does by changing the
// operator Deployment's DRIVER_IMAGE (the CSV puts it there; the operator renders the driver's workloads with it):
// the next release's driver image (the same tree built with a higher version, which `go tool mage test` prepares
// for the OLM upgrade test too). The operator rolls the node DaemonSet and the controller Deployment to it; the
// application pod is never restarted, keeps its data and writes on, the new node pod's watchdog adopts its relay,
// and the new plugin unpublishes the volume when the pod is deleted.
func (s *stack) driverImageRoll(t *testing.T) {
	ctx := t.Context()
	nextImages := os.Getenv(NextImagesDirEnv)
	if nextImages == "" {
		t.Fatalf("%s is not set: run the suite with `go tool mage test` or `go tool mage cluster:stack`, which build the next release", NextImagesDirEnv)
	}
	next, err := localcluster.ReadProjectImages(nextImages)
	if err != nil {
		t.Fatal(err)
	}
	if next.Driver.Reference == "" {
		t.Fatalf("%s has no driver image for the cluster", nextImages)
	}
	nextDriver := next.Driver.Pinned()
	start := time.Now()
	if err := s.c.LoadProjectImage(ctx, next.Driver); err != nil {
		t.Fatalf("loading the next driver image: %v", err)
	}
	t.Logf("loaded %s (%s) in %s", next.Driver.Reference, nextDriver, time.Since(start).Round(100*time.Millisecond))

	app := s.startWriter(t, "roll-writer", "node-restart")
	r := s.relayOf(t, app)
	oldPod, _ := s.nodeContainer(t)
	start = time.Now()
	oldDriver := s.setOperatorEnv(t, "DRIVER_IMAGE", nextDriver)
	if oldDriver == nextDriver {
		t.Fatalf("the next driver image %s is the one installed", nextDriver)
	}
	t.Logf("operator's DRIVER_IMAGE %s -> %s", oldDriver, nextDriver)
	eventually(t, 5*time.Minute, "node DaemonSet and controller Deployment on the next driver image", func(ctx context.Context) error {
		ds, err := s.kube.AppsV1().DaemonSets(namespace).Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d, err := s.kube.AppsV1().Deployments(namespace).Get(ctx, controllerName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for what, spec := range map[string]corev1.PodSpec{"node DaemonSet": ds.Spec.Template.Spec, "controller Deployment": d.Spec.Template.Spec} {
			if img := containerImage(spec, "csi-driver"); img != nextDriver {
				return fmt.Errorf("%s runs csi-driver %s", what, img)
			}
		}
		return nil
	})
	s.waitDeployment(t, operatorName, 3*time.Minute)
	s.waitDaemonSet(t, nodeName, 5*time.Minute)
	s.waitDeployment(t, controllerName, 5*time.Minute)
	newPod, newID := s.nodeContainer(t)
	np, err := s.kube.CoreV1().Pods(namespace).Get(ctx, newPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if newPod == oldPod || containerImage(np.Spec, "csi-driver") != nextDriver {
		t.Fatalf("node pod %s (was %s) runs csi-driver %s; want a new pod on %s", newPod, oldPod, containerImage(np.Spec, "csi-driver"), nextDriver)
	}
	t.Logf("driver rolled to the next image %s after the operator's change: node pod %s replaced %s", time.Since(start).Round(time.Second), newPod, oldPod)

	p, err := s.kube.CoreV1().Pods("default").Get(ctx, app.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != app.UID || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("application pod after the roll: UID %s (was %s), phase %s, statuses %+v; want the same pod running, never restarted", p.UID, app.UID, p.Status.Phase, p.Status.ContainerStatuses)
	}
	s.relayAdopted(t, r, newPod, newID)
	s.stillWrites(t, app)
	// The new plugin unpublishes; the watchdog's minute-long cleanup of the relay after that is the restart
	// scenario's (the same code on the same image layout), not waited for again here.
	s.unpublished(t, app, r)
}

// mountTableWritable checks that the stand-in's mount table is where the backend can keep it in both driver
// containers: the node's is the hostPath /var/run/efs (shared with the host, so it outlives the container); the
// controller's is in its own writable root file system (the driver makes the efs-utils state directory when it
// starts, for the root-directory deletion's mounts).
func (s *stack) mountTableWritable(t *testing.T) {
	t.Helper()
	for _, app := range []string{nodeName, controllerName} {
		_, id := s.driverContainer(t, app)
		pid, err := containerInit(id)
		if err != nil {
			t.Fatal(err)
		}
		// Entering the container's mount namespace puts the shell in its root, where /var/run may be a link.
		script := `set -e; [ "$EFS_UTILS_PROC_MOUNTS" = "$1" ] || { echo "EFS_UTILS_PROC_MOUNTS=$EFS_UTILS_PROC_MOUNTS"; exit 1; }
d=$(dirname "$1"); f="$d/.table-probe.$$"; : > "$f"; rm "$f"; echo ok`
		cmd := exec.CommandContext(t.Context(), "nsenter", "--target", strconv.Itoa(pid), "--mount", "--",
			"/bin/sh", "-c", script, "sh", standInMountTable)
		cmd.Env = containerEnv(t, pid)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("%s's csi-driver container (%s): the mount table %s cannot be written there: %v: %s", app, id, standInMountTable, err, out)
		}
	}
}

// containerEnv is the environment of the process pid (its image's and the pod's).
func containerEnv(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// setOperatorEnv sets the operator Deployment's container environment variable name to value and returns its
// value before.
func (s *stack) setOperatorEnv(t *testing.T, name, value string) string {
	t.Helper()
	var old string
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		d, err := s.kube.AppsV1().Deployments(namespace).Get(t.Context(), operatorName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := &d.Spec.Template.Spec.Containers[0]
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
		if i < 0 {
			return fmt.Errorf("the operator's container %s has no %s", c.Name, name)
		}
		old, c.Env[i].Value = c.Env[i].Value, value
		_, err = s.kube.AppsV1().Deployments(namespace).Update(t.Context(), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("setting the operator's %s: %v", name, err)
	}
	return old
}

func containerImage(spec corev1.PodSpec, name string) string {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// staticRootVolume creates a PersistentVolume of the regional file system's root (handle fs-…, TLS through the
// test CA in the trusted bundle, as the stack suite's static volumes) and a claim bound to it, both named name.
func (s *stack) staticRootVolume(t *testing.T, name string) {
	t.Helper()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: driverName, VolumeHandle: s.aws.RegionalFileSystemID}},
		},
	}
	if _, err := s.kube.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	empty := ""
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, StorageClassName: &empty, VolumeName: name,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
		},
	}
	if _, err := s.kube.CoreV1().PersistentVolumeClaims("default").Create(t.Context(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// writer is an application pod that appends to <name>.log at the root of its volume, a static volume of the
// regional file system's root: log is that file in the backing store.
type writer struct {
	*corev1.Pod
	log string
}

// startWriter starts a pod on claim (a volume of the regional file system's root) that writes "start" into
// /data/<name>.log, then appends a line every half second until it is deleted.
func (s *stack) startWriter(t *testing.T, name, claim string) writer {
	t.Helper()
	ctx := t.Context()
	grace := int64(1)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "main", Image: s.shellImage(t), ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"/bin/sh", "-c", `echo start > /data/$ME.log; while true; do date +%s%N >> /data/$ME.log; sleep 0.5; done`},
				Env:          []corev1.EnvVar{{Name: "ME", Value: name}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
	created, err := s.kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := writer{Pod: created, log: filepath.Join(s.aws.BackingDir, s.aws.RegionalFileSystemID, name+".log")}
	eventually(t, 3*time.Minute, "pod "+name+" Running and writing to the backing store", func(ctx context.Context) error {
		p, err := s.kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		if n, first := logLines(w.log); n < 2 || first != "start" {
			return fmt.Errorf("%s: %d lines, the first %q", w.log, n, first)
		}
		return nil
	})
	return w
}

// logLines counts the lines of the file at path and returns the first.
func logLines(path string) (int, string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, first := 0, ""
	for sc.Scan() {
		if n == 0 {
			first = sc.Text()
		}
		n++
	}
	return n, first
}

// stillWrites checks that the application pod writes on through its mount and kept what it wrote first.
func (s *stack) stillWrites(t *testing.T, w writer) {
	t.Helper()
	before, _ := logLines(w.log)
	eventually(t, time.Minute, "the application still writes through its mount", func(context.Context) error {
		n, first := logLines(w.log)
		if first != "start" {
			return fmt.Errorf("%s starts with %q, not the application's first line", w.log, first)
		}
		if n <= before+2 {
			return fmt.Errorf("%s: %d lines, not past %d", w.log, n, before+2)
		}
		return nil
	})
	p, err := s.kube.CoreV1().Pods("default").Get(t.Context(), w.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != w.UID || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("application pod %s: UID %s (was %s), phase %s, statuses %+v; want the same pod running, never restarted", w.Name, p.UID, w.UID, p.Status.Phase, p.Status.ContainerStatuses)
	}
}

// relay is the TLS relay of an application pod's volume as efs-utils' state file records it.
type relay struct {
	// state is the state file's path; port the relay's (the state file's name ends with it).
	state string
	port  int
	// pid is the relay's stunnel in the node plugin container's PID namespace, as the state file records it.
	pid any
	// mountpoint is the volume's mount point in the pod's directory.
	mountpoint string
}

// relayOf finds the relay of the application pod's volume and checks that it answers through to the mount target.
func (s *stack) relayOf(t *testing.T, w writer) relay {
	t.Helper()
	r := relay{}
	r.state, r.port = relayState(t, string(w.UID))
	st := readState(t, r.state)
	r.pid, _ = st["pid"]
	r.mountpoint, _ = st["mountpoint"].(string)
	if err := probeRelay(r.port); err != nil {
		t.Fatalf("the relay of %s does not answer: %v", r.state, err)
	}
	table, err := os.ReadFile(standInMountTable)
	if err != nil || !strings.Contains(string(table), " "+r.mountpoint+" nfs4 ") {
		t.Fatalf("the mount table %s does not list %s (%v):\n%s", standInMountTable, r.mountpoint, err, table)
	}
	return r
}

// relayAdopted waits until the node plugin container id of pod runs the relay of r again: a stunnel in that
// container whose PID the state file records, listening on the same port and answering through to the mount
// target. It logs what the container's watchdog logged about it.
func (s *stack) relayAdopted(t *testing.T, r relay, pod, id string) {
	t.Helper()
	start := time.Now()
	defer func() {
		if !t.Failed() {
			t.Logf("relay of %s adopted in container %s after %s; its watchdog logged:\n%s", filepath.Base(r.state), id,
				time.Since(start).Round(100*time.Millisecond), s.watchdogLog(t, pod, filepath.Base(r.state)))
		}
	}()
	eventually(t, 2*time.Minute, "relay adopted by the new container's watchdog", func(context.Context) error {
		// (the PID may be the old one again: a new PID namespace numbers the same start-up alike)
		st := readState(t, r.state)
		pid, ok := st["pid"].(float64)
		if !ok {
			return fmt.Errorf("state file %s records no relay pid (%v)", r.state, st["pid"])
		}
		if !slices.Contains(stunnelsIn(id), int(pid)) {
			return fmt.Errorf("pid %v of state file %s is no stunnel of container %s (its stunnels: %v)", pid, r.state, id, stunnelsIn(id))
		}
		return probeRelay(r.port)
	})
}

// watchdogLog returns the lines of the node pod's efs-utils watchdog log (its emptyDir log-dir, on the host) that
// name the state file name.
func (s *stack) watchdogLog(t *testing.T, pod, name string) string {
	t.Helper()
	p, err := s.kube.CoreV1().Pods(namespace).Get(t.Context(), pod, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	path := filepath.Join("/var/lib/kubelet/pods", string(p.UID), "volumes/kubernetes.io~empty-dir/log-dir/mount-watchdog.log")
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, name) {
			out = append(out, "  "+line)
		}
	}
	return strings.Join(out, "\n")
}

// unpublished deletes the application pod and checks that the node plugin unpublished its volume: the pod is
// gone, its mount point is no mount on the host and the stand-in's mount table no longer lists it. It returns the
// relay's pid as the state file named it before, for relayCleanedUp.
func (s *stack) unpublished(t *testing.T, w writer, r relay) float64 {
	t.Helper()
	pid, _ := readState(t, r.state)["pid"].(float64)
	if err := s.kube.CoreV1().Pods("default").Delete(t.Context(), w.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "application pod deleted (volume unpublished)", func(ctx context.Context) error {
		_, err := s.kube.CoreV1().Pods("default").Get(ctx, w.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mountinfo), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == r.mountpoint {
			t.Fatalf("%s is still mounted on the host: %s", r.mountpoint, line)
		}
	}
	eventually(t, 10*time.Second, "mount table without the volume", func(context.Context) error {
		table, err := os.ReadFile(standInMountTable)
		if err != nil {
			return err
		}
		if strings.Contains(string(table), " "+r.mountpoint+" ") {
			return fmt.Errorf("%s still lists %s:\n%s", standInMountTable, r.mountpoint, table)
		}
		return nil
	})
	return pid
}

// relayCleanedUp waits until the watchdog of the node container id has stopped the relay of a volume unpublished
// by unpublished and removed its state: efs-utils counts a missing mount only after 5 polls, then waits
// unmount_grace_period_sec (30 s) before the relay stops, so this takes about a minute. pid is the relay's pid
// that unpublished returned.
func (s *stack) relayCleanedUp(t *testing.T, r relay, pid float64, pod, id string) {
	t.Helper()
	start := time.Now()
	defer func() {
		if !t.Failed() {
			t.Logf("relay of %s stopped and its state removed %s after the pod; the watchdog logged:\n%s", filepath.Base(r.state),
				time.Since(start).Round(time.Second), s.watchdogLog(t, pod, filepath.Base(r.state)))
		}
	}()
	eventually(t, 2*time.Minute, "relay stopped and its state removed", func(context.Context) error {
		if _, err := os.Stat(r.state); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("state file %s still there (%v)", r.state, err)
		}
		if _, err := os.Stat(r.state + "+"); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("state directory %s+ still there (%v)", r.state, err)
		}
		if slices.Contains(stunnelsIn(id), int(pid)) {
			return fmt.Errorf("the relay's stunnel (pid %v) still runs in container %s", pid, id)
		}
		if err := dialRelay(r.port); err == nil {
			return fmt.Errorf("something still listens on the relay port %d", r.port)
		}
		return nil
	})
}

// relayState returns the efs-utils state file of the TLS mount in the pod's volume directory and its relay port.
func relayState(t *testing.T, podUID string) (string, int) {
	t.Helper()
	entries, err := os.ReadDir(efsStateDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		m := relayStateFile.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() || !strings.Contains(e.Name(), podUID) {
			continue
		}
		port, _ := strconv.Atoi(m[1])
		return filepath.Join(efsStateDir, e.Name()), port
	}
	t.Fatalf("no efs-utils state file of pod %s in %s: %v", podUID, efsStateDir, names)
	return "", 0
}

func readState(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}

// dialRelay connects to the relay's listening port (the node pod is host-network, so it listens on the host's
// loopback).
func dialRelay(port int) error {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// probeRelay sends a request without an export through the relay and expects the NFS server stand-in's refusal:
// the answer travels stunnel's TLS connection (the mount target's name and CA verified, the mount's client
// certificate) from the mount target's stunnel server and its backend, so the whole relay works.
func probeRelay(port int) error {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("{}\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("no answer through the relay on port %d: %w", port, err)
	}
	var resp struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil || !strings.Contains(resp.Error, "export") {
		return fmt.Errorf("relay on port %d: answer %q; want the NFS server stand-in's refusal of a request without an export", port, line)
	}
	return nil
}

// nodeContainer returns the node pod's name and its csi-driver container's ID.
func (s *stack) nodeContainer(t *testing.T) (string, string) {
	t.Helper()
	return s.driverContainer(t, nodeName)
}

// driverContainer returns the name of the running pod labelled app=app (not being deleted) and its csi-driver
// container's ID.
func (s *stack) driverContainer(t *testing.T, app string) (string, string) {
	t.Helper()
	pods, err := s.kube.CoreV1().Pods(namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "csi-driver" && cs.ContainerID != "" && cs.State.Running != nil {
				return p.Name, strings.TrimPrefix(cs.ContainerID, "containerd://")
			}
		}
	}
	t.Fatalf("no running %s pod with a running csi-driver container (%d pods)", app, len(pods.Items))
	return "", ""
}

// containerProcs returns the host PIDs of the processes in the container (found by its ID in their cgroup).
func containerProcs(id string) []int {
	dirs, _ := os.ReadDir("/proc")
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cgroup"))
		if err == nil && strings.Contains(string(b), id) {
			out = append(out, pid)
		}
	}
	return out
}

// nsPID returns the PID of host process pid in its own PID namespace (the last NSpid field), or 0.
func nsPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" {
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}

// containerInit returns the host PID of the container's first process (PID 1 in its PID namespace).
func containerInit(id string) (int, error) {
	for _, pid := range containerProcs(id) {
		if nsPID(pid) == 1 {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process with PID 1 in its namespace in container %s", id)
}

// stunnelsIn returns the PIDs, in the container's PID namespace, of the stunnel processes in the container.
func stunnelsIn(id string) []int {
	var out []int
	for _, pid := range containerProcs(id) {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if strings.HasPrefix(strings.TrimSpace(string(comm)), "stunnel") {
			out = append(out, nsPID(pid))
		}
	}
	return out
}
