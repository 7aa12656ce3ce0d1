//go:build cluster

package stack

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// accessPointDeletion deletes a dynamic claim and checks what the operator's default (the controller's
// --delete-access-point-root-dir=true) promises: the PersistentVolume goes, the access point is deleted in EFS
// (efs-standin's fakeaws), and the access point's root directory with the data in it leaves the backing store,
// while the other access points' directories and their files stay. The controller mounts the file system root
// for that itself, through mount.efs with tls and iam, in its own container.
func (s *stack) accessPointDeletion(t *testing.T) {
	ctx := t.Context()
	fsID := s.aws.RegionalFileSystemID
	fsRoot := filepath.Join(s.aws.BackingDir, fsID)
	before := filesUnder(t, fsRoot)

	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "doomed", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &dynamicClass,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := s.kube.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.runPod(t, "write-doomed", claim.Name, "mkdir -p /data/sub && echo doomed > /data/sub/file && cat /data/sub/file", "doomed")
	c, err := s.kube.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvName := c.Spec.VolumeName
	pv, err := s.kube.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
	if err != nil || pv.Spec.CSI == nil {
		t.Fatalf("PersistentVolume %q of claim doomed: %v %+v", pvName, err, pv)
	}
	_, apID, _ := strings.Cut(pv.Spec.CSI.VolumeHandle, "::")
	var apDir string
	for _, f := range filesUnder(t, fsRoot) {
		if strings.HasSuffix(f, "/sub/file") {
			apDir = strings.TrimSuffix(f, "/sub/file")
		}
	}
	if apDir == "" {
		t.Fatalf("the pod's file is nowhere in the backing store %s", fsRoot)
	}
	t.Logf("claim doomed: volume %s, access point %s, root directory %s in the backing store", pvName, apID, apDir)

	if err := s.kube.CoreV1().PersistentVolumeClaims("default").Delete(ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ap := s.efsClient(t)
	defer func() {
		if t.Failed() {
			t.Logf("the controller, after the claim's deletion:\n%s", s.controllerLogs(t, pvName))
		}
	}()
	eventually(t, 3*time.Minute, "volume "+pvName+" and access point "+apID+" deleted", func(ctx context.Context) error {
		pv, err := s.kube.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("PersistentVolume %s still there, phase %s %s", pvName, pv.Status.Phase, pv.Status.Message)
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		if _, ok := accessPoints(t, ap, fsID)[apID]; ok {
			return fmt.Errorf("access point %s still in EFS", apID)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(fsRoot, apDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the access point's root directory %s is still in the backing store (%v)", apDir, err)
	}
	after := filesUnder(t, fsRoot)
	for _, f := range before {
		if !slices.Contains(after, f) {
			t.Errorf("%s was in the backing store before and is gone: the deletion reached beyond the access point's root", f)
		}
	}
}

// dynamicClass is the StorageClass dynamicVolumeBound creates.
var dynamicClass = "efs-sc"

// filesUnder lists the regular files below root, relative to it with a leading slash.
func filesUnder(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, path)
			out = append(out, "/"+rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing the backing store %s: %v", root, err)
	}
	return out
}

// controllerLogs returns the events of the PersistentVolume name and the tails of the controller pod's csi-driver
// and csi-provisioner logs and of efs-utils' mount log in its log-dir emptyDir: what explains a volume the
// controller did not delete.
func (s *stack) controllerLogs(t *testing.T, name string) string {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	var b strings.Builder
	events, err := s.kube.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err == nil {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "event %s %s: %s\n", e.Type, e.Reason, e.Message)
		}
	}
	d, err := s.kube.AppsV1().Deployments(namespace).Get(ctx, controllerName, metav1.GetOptions{})
	if err != nil {
		return b.String() + err.Error()
	}
	pods, err := s.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
	if err != nil {
		return b.String() + err.Error()
	}
	lines := int64(40)
	for _, p := range pods.Items {
		for _, c := range []string{"csi-driver", "csi-provisioner"} {
			logs, err := s.kube.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c, TailLines: &lines}).DoRaw(ctx)
			fmt.Fprintf(&b, "--- %s/%s (%v):\n%s\n", p.Name, c, err, logs)
		}
		mountLog := filepath.Join("/var/lib/kubelet/pods", string(p.UID), "volumes/kubernetes.io~empty-dir/log-dir/mount.log")
		fmt.Fprintf(&b, "--- %s efs-utils mount.log:\n%s\n", p.Name, tail(mountLog, 30))
	}
	return b.String()
}
