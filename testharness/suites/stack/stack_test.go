//go:build cluster

package stack

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/openshift/aws-efs-csi/operator/pkg/sharedvolume"
	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/bundleinstall"
	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

const (
	driverName     = "efs.csi.aws.com"
	controllerName = "aws-efs-csi-driver-controller"
	nodeName       = "aws-efs-csi-driver-node"
	operatorName   = "aws-efs-csi-driver-operator"
)

// ourServiceAccounts are the ServiceAccounts of the operator and the driver it installs.
var ourServiceAccounts = []string{operatorName, controllerServiceAccount, "aws-efs-csi-driver-node-sa"}

// controllerServiceAccount is the driver controller's ServiceAccount: csi-provisioner writes PersistentVolumes and
// Events with it whenever claims come and go.
const controllerServiceAccount = "aws-efs-csi-driver-controller-sa"

// hostPaths are the host directories the driver's node DaemonSet creates (hostPath DirectoryOrCreate) outside
// the kubelet's root; the suite removes what it created of them (missing parents included).
var hostPaths = []string{"/var/run/efs", "/var/amazon/efs", "/etc/amazon/efs", "/etc/selinux"}

// stack is a local cluster with our operator installed from its bundle.
type stack struct {
	t    *testing.T
	c    *localcluster.Cluster
	kube kubernetes.Interface
	ops  operatorclient.Interface
	dyn  dynamic.Interface
	// aws is the data helper's efs-standin: fakeaws behind the Infrastructure's serviceEndpoints.
	aws *standInReady
	// apHandle and apDir are the dynamic volume's handle (fs::fsap) and its access point's root directory.
	apHandle, apDir string
	// started is when the operator was installed.
	started time.Time
}

// startStack starts the local cluster, loads the stack's images, makes it look like OpenShift on AWS and
// installs the operator from the bundle; at the end of the test it prints diagnostics when the test failed and
// stops everything.
func startStack(t *testing.T) *stack {
	t.Helper()
	s := startPlatform(t)
	b, err := bundleinstall.Read(stackDir + "/" + BundleDir)
	if err != nil {
		t.Fatal(err)
	}
	s.started = time.Now()
	if err := bundleinstall.Install(t.Context(), s.c.Config, b, namespace); err != nil {
		t.Fatalf("installing the operator from the bundle: %v", err)
	}
	return s
}

// startPlatform is startStack up to the operator's install: the local cluster with the stack's images, looking
// like OpenShift on AWS, with efs-standin behind its AWS endpoints.
func startPlatform(t *testing.T) *stack {
	t.Helper()
	if bins == nil {
		t.Skip("the stack suite needs the Kubernetes binaries, which -short does not build")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the local cluster runs containers: run the suite as root (go tool mage test does)")
	}
	ctx := t.Context()
	images, err := ReadImages(stackDir)
	if err != nil {
		t.Fatalf("reading the stack's images (%s=%s): %v", DirEnv, stackDir, err)
	}
	aws := startEFSStandIn(t)
	trustedCA, err := os.ReadFile(aws.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: t.TempDir(), Binaries: *bins, Log: testWriter{t}})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	// Only now, holding the machine's cluster lock: another suite's cluster may have made these paths before.
	createdHostPaths := missing(hostPaths)
	s := &stack{t: t, c: c, aws: aws}
	stopPlatform := func() {}
	t.Cleanup(func() {
		stopPlatform()
		if t.Failed() {
			var w strings.Builder
			c.Diagnose(context.WithoutCancel(ctx), &w)
			t.Log(w.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the local cluster: %v", err)
		}
		for _, p := range createdHostPaths {
			if err := os.RemoveAll(p); err != nil {
				t.Errorf("removing %s, which the driver's DaemonSet created: %v", p, err)
			}
		}
	})
	var errs [4]error
	var conf configclient.Interface
	s.kube, errs[0] = kubernetes.NewForConfig(c.Config)
	s.ops, errs[1] = operatorclient.NewForConfig(c.Config)
	conf, errs[2] = configclient.NewForConfig(c.Config)
	s.dyn, errs[3] = dynamic.NewForConfig(c.Config)
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	control := c.ControlPlane()
	p := &platform{kube: s.kube, dyn: s.dyn, conf: conf, ops: s.ops, ca: control.CA, awsURL: aws.AWSEndpoint, trustedCA: trustedCA}
	if _, err := c.LoadProjectImages(ctx, os.Getenv(localcluster.ImagesDirEnv), testWriter{t}); err != nil {
		t.Fatalf("loading the project's images: %v", err)
	}
	for _, im := range images {
		if im.Archive == "" {
			continue
		}
		if err := c.ImportImage(ctx, im.Archive); err != nil {
			t.Fatalf("loading %s: %v", im.Placeholder, err)
		}
	}
	// The controller runs on control-plane nodes (node-role.kubernetes.io/master), as on OpenShift; the node
	// plugin identifies its instance and zone from the Node when instance metadata is unreachable, from what the
	// AWS cloud controller manager sets: spec.providerID and the topology labels.
	patch := []byte(`{"metadata":{"labels":{"node-role.kubernetes.io/master":"","topology.kubernetes.io/region":"` + region +
		`","topology.kubernetes.io/zone":"` + zone + `"}},"spec":{"providerID":"aws:///` + zone + `/` + instanceID + `"}}`)
	if _, err := s.kube.CoreV1().Nodes().Patch(ctx, c.Node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.install(ctx, control); err != nil {
		t.Fatalf("making the cluster look like OpenShift on AWS: %v", err)
	}
	platformCtx, cancel := context.WithCancel(ctx)
	platformDone := make(chan struct{})
	go func() {
		defer close(platformDone)
		p.run(platformCtx, func(err error) { t.Logf("platform stand-in: %v", err) })
	}()
	stopPlatform = func() { cancel(); <-platformDone }
	return s
}

// TestOperatorInstallsTheDriver installs the operator from its bundle, creates the ClusterCSIDriver and waits
// for the driver to run; then Removed and Managed again, and the ClusterCSIDriver's deletion. Throughout, the
// API server must deny no request of our ServiceAccounts, and once the install is steady none of them writes.
func TestOperatorInstallsTheDriver(t *testing.T) {
	s := startStack(t)
	if !t.Run("operator ready", func(t *testing.T) {
		s.waitDeployment(t, operatorName, 5*time.Minute)
	}) {
		return
	}
	if !t.Run("driver ready", func(t *testing.T) {
		s.createClusterCSIDriver(t)
		s.waitDeployment(t, controllerName, 5*time.Minute)
		s.waitDaemonSet(t, nodeName, 5*time.Minute)
		s.waitAvailable(t, 2*time.Minute)
	}) {
		return
	}
	if !t.Run("dynamic volume", func(t *testing.T) {
		s.dynamicVolumeBound(t)
	}) {
		return
	}
	if !t.Run("two pods share files", func(t *testing.T) {
		s.podsShareFiles(t)
	}) {
		return
	}
	t.Run("static volumes", func(t *testing.T) {
		s.staticVolumes(t)
	})
	t.Run("shared volume", func(t *testing.T) {
		claim := s.sharedVolumeBound(t)
		// A pod on the SharedVolume's claim sees the files the pods of the dynamic claim wrote (the same access
		// point), through the PersistentVolume the operator made: no mount options, TLS by default.
		s.runPod(t, "read-shared-volume", claim, "echo from-team > /data/team && cat /data/a", "from-a")
	})
	// Kubernetes' storage tests run while the install is watched for writes on resync: both take minutes of
	// waiting, and the tests' claims make only the controller's csi-provisioner write (PersistentVolumes and
	// their Events), so its ServiceAccount is left out of that window; the quiet start counts everyone.
	// Before the storm: its hundred volumes' deletions (each access point's directory removed through a mount)
	// would still occupy the provisioner's workers while these tests provision.
	t.Run("steady, with kubernetes storage tests", func(t *testing.T) {
		if !t.Run("quiet", s.waitQuiet) {
			return
		}
		t.Run("steady", func(t *testing.T) {
			t.Parallel()
			s.checkNoWritesWhenSteady(t, controllerServiceAccount)
		})
		t.Run("kubernetes storage tests", func(t *testing.T) {
			t.Parallel()
			s.kubernetesStorageTests(t)
		})
	})
	// Access point deletion before the storm: the storm ends by restoring the shipped controller, whose new
	// csi-provisioner takes the handed-over lease only at its next 26 s retry; nothing after the storm provisions.
	t.Run("access point deletion", s.accessPointDeletion)
	t.Run("provisioning storm", s.provisioningStorm)
	t.Run("node plugin restart", s.nodePluginRestart)
	t.Run("driver image roll", s.driverImageRoll)
	if !t.Run("removed then managed", func(t *testing.T) {
		s.setManagementState(t, opv1.Removed)
		eventually(t, 2*time.Minute, "driver workloads and pods gone in Removed", s.driverGone)
		s.setManagementState(t, opv1.Managed)
		s.waitDeployment(t, controllerName, 5*time.Minute)
		s.waitDaemonSet(t, nodeName, 5*time.Minute)
		s.waitAvailable(t, 2*time.Minute)
	}) {
		return
	}
	t.Run("uninstall", func(t *testing.T) {
		if err := s.ops.OperatorV1().ClusterCSIDrivers().Delete(t.Context(), driverName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "ClusterCSIDriver deleted", func(ctx context.Context) error {
			cr, err := s.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, driverName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("still there with finalizers %v", cr.Finalizers)
		})
		eventually(t, 2*time.Minute, "driver gone", func(ctx context.Context) error {
			if err := s.driverGone(ctx); err != nil {
				return err
			}
			if _, err := s.kube.StorageV1().CSIDrivers().Get(ctx, driverName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CSIDriver %s still there (%v)", driverName, err)
			}
			return nil
		})
	})
	s.checkNoDenials(t)
}

// dynamicVolumeBound creates a StorageClass with the default parameters of dynamic provisioning (an access point
// per volume on the regional file system; TLS is the default) and a ReadWriteMany claim, and waits until the
// claim is Bound to a PersistentVolume of the driver whose handle names an access point the controller created
// in fakeaws, through the Infrastructure's serviceEndpoints and the trusted CA bundle.
func (s *stack) dynamicVolumeBound(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: dynamicClass},
		Provisioner: driverName,
		Parameters:  map[string]string{"provisioningMode": "efs-ap", "fileSystemId": s.aws.RegionalFileSystemID, "directoryPerms": "700"},
		// No mount options: TLS is the driver's default, and stunnel verifies the mount target with efs-utils'
		// CA file, which in the cluster's driver image is the test CA that signed the mount targets' certificates.
	}
	if _, err := s.kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &sc.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
		},
	}
	if _, err := s.kube.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pvName string
	created := time.Now()
	defer func() {
		// A slow first claim has been a controller rollout right after the install: the new csi-provisioner
		// waits for the old one's lease. Say which, so the time can be told apart from provisioning.
		if took := time.Since(created); took > 20*time.Second {
			t.Logf("claim default/shared took %s to be Bound; %s", took.Round(time.Second), s.controllerHistory(context.WithoutCancel(ctx)))
		}
	}()
	eventually(t, 3*time.Minute, "claim default/shared Bound", func(ctx context.Context) error {
		c, err := s.kube.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("phase %s", c.Status.Phase)
		}
		pvName = c.Spec.VolumeName
		return nil
	})
	pv, err := s.kube.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != driverName || !strings.HasPrefix(pv.Spec.CSI.VolumeHandle, s.aws.RegionalFileSystemID+"::fsap-") {
		t.Fatalf("PersistentVolume %s: CSI source %+v; want driver %s and a handle %s::fsap-...", pvName, pv.Spec.CSI, driverName, s.aws.RegionalFileSystemID)
	}
	s.apHandle = pv.Spec.CSI.VolumeHandle
	calls, err := s.aws.calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if calls["CreateAccessPoint"] < 1 {
		t.Errorf("fakeaws calls %v; want a CreateAccessPoint", calls)
	}
	t.Logf("fakeaws calls after provisioning: %v", calls)
}

// controllerHistory describes the controller Deployment's ReplicaSets (revision, creation time, replicas) and who
// holds csi-provisioner's lease since when.
func (s *stack) controllerHistory(ctx context.Context) string {
	var b strings.Builder
	rss, err := s.kube.AppsV1().ReplicaSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	b.WriteString("controller ReplicaSets:")
	for _, rs := range rss.Items {
		if strings.HasPrefix(rs.Name, controllerName+"-") {
			fmt.Fprintf(&b, " %s (revision %s, created %s, %d replicas, pod annotations %v, containers %s)", rs.Name,
				rs.Annotations["deployment.kubernetes.io/revision"], rs.CreationTimestamp.UTC().Format("15:04:05"), rs.Status.Replicas,
				rs.Spec.Template.Annotations, containerDigests(rs.Spec.Template.Spec.Containers))
		}
	}
	if l, err := s.kube.CoordinationV1().Leases(namespace).Get(ctx, provisionerLease, metav1.GetOptions{}); err == nil && l.Spec.HolderIdentity != nil {
		fmt.Fprintf(&b, "; lease %s held by %s, acquired %s, %d transitions", provisionerLease, *l.Spec.HolderIdentity,
			l.Spec.AcquireTime.UTC().Format("15:04:05"), ptr.Deref(l.Spec.LeaseTransitions, 0))
	}
	return b.String()
}

// containerDigests names each container with a short digest of its image, arguments, environment and mounts, so
// that two ReplicaSets' lists show which container a rollout changed.
func containerDigests(cs []corev1.Container) string {
	var parts []string
	for _, c := range cs {
		b, _ := json.Marshal([]any{c.Image, c.Args, c.Env, c.VolumeMounts})
		parts = append(parts, fmt.Sprintf("%s=%x", c.Name, sha256.Sum256(b))[:len(c.Name)+9])
	}
	return strings.Join(parts, " ")
}

// podsShareFiles runs two pods on the claim default/shared: each writes a file and reads the other's, through
// kubelet → CSI node → mount.efs → stunnel → the mount target stand-in; the files land in the access point's
// directory of the backing store. Each mount's NFS listing by the mount.nfs4 stand-in crossed the node's TLS relay
// to the real NFS server behind the mount target.
func (s *stack) podsShareFiles(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	nfsBefore, err := s.aws.nfsConnections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	images, err := ReadImages(stackDir)
	if err != nil {
		t.Fatal(err)
	}
	var shell string
	for _, im := range images {
		if im.Placeholder == "TOOLS_IMAGE" {
			shell = im.Ref
		}
	}
	script := `echo from-$ME > /data/$ME; while [ ! -f /data/$PEER ]; do sleep 1; done; echo "read $(cat /data/$PEER)"`
	for _, pair := range [][2]string{{"a", "b"}, {"b", "a"}} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "writer-" + pair[0], Namespace: "default"},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "main", Image: shell, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:      []string{"/bin/sh", "-c", script},
					Env:          []corev1.EnvVar{{Name: "ME", Value: pair[0]}, {Name: "PEER", Value: pair[1]}},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}}}},
			},
		}
		if _, err := s.kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, pair := range [][2]string{{"a", "b"}, {"b", "a"}} {
		name := "writer-" + pair[0]
		eventually(t, 3*time.Minute, "pod "+name+" Succeeded", func(ctx context.Context) error {
			p, err := s.kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase == corev1.PodFailed {
				t.Fatalf("pod %s failed: %s", name, p.Status.Message)
			}
			if p.Status.Phase != corev1.PodSucceeded {
				return fmt.Errorf("phase %s", p.Status.Phase)
			}
			return nil
		})
		logs, err := s.kube.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if want := "read from-" + pair[1]; err != nil || !strings.Contains(string(logs), want) {
			t.Errorf("pod %s log %q, %v; want %q", name, logs, err, want)
		}
	}
	var written []string
	_ = filepath.WalkDir(filepath.Join(s.aws.BackingDir, s.aws.RegionalFileSystemID), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "a" {
			written = append(written, path)
		}
		return nil
	})
	if len(written) != 1 {
		t.Fatalf("files named a in the access points' directories of the backing store: %v; want one", written)
	}
	rel, _ := filepath.Rel(filepath.Join(s.aws.BackingDir, s.aws.RegionalFileSystemID), filepath.Dir(written[0]))
	s.apDir = "/" + rel
	nfsAfter, err := s.aws.nfsConnections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each pod's volume is a mount of its own (the driver has no staging step), listed over NFS first.
	if fsID := s.aws.RegionalFileSystemID; nfsAfter[fsID]-nfsBefore[fsID] < 2 {
		t.Errorf("NFS connections of %s to %s: %d before the two pods, %d after; want at least 2 more (the mount.nfs4 stand-in lists each directory over NFS through the relay before mounting it)",
			fsID, s.aws.NFSServer, nfsBefore[fsID], nfsAfter[fsID])
	}
	for _, name := range []string{"writer-a", "writer-b"} {
		if err := s.kube.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}
}

// staticVolumes mounts the dynamic volume's data through three static PersistentVolumes, one per volume handle
// form: the file system root (fs), the access point (fs::fsap) and a sub-path (fs:/path); a pod on each reads the
// file pod a wrote.
func (s *stack) staticVolumes(t *testing.T) {
	t.Helper()
	fsID := s.aws.RegionalFileSystemID
	cases := []struct{ name, handle, path string }{
		{"static-fs", fsID, s.apDir + "/a"},
		{"static-ap", s.apHandle, "/a"},
		{"static-path", fsID + ":" + s.apDir, "/a"},
	}
	empty := ""
	for _, c := range cases {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: c.name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: driverName, VolumeHandle: c.handle}},
			},
		}
		if _, err := s.kube.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, StorageClassName: &empty, VolumeName: c.name,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
			},
		}
		if _, err := s.kube.CoreV1().PersistentVolumeClaims("default").Create(t.Context(), claim, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s.runPod(t, "read-"+c.name, c.name, "cat /data"+c.path, "from-a")
	}
}

// sharedVolumeBound creates a SharedVolume for the dynamic volume's access point, waits until the operator
// reports it Ready with its claim Bound, and returns the claim's name.
func (s *stack) sharedVolumeBound(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	fsID, apID, ok := strings.Cut(s.apHandle, "::")
	if !ok {
		t.Fatalf("dynamic volume handle %q is not fs::fsap", s.apHandle)
	}
	// A SharedVolume gets its volume only for what the cluster admin granted to its namespace (the operator's
	// grants ConfigMap, docs/user-guide/sharedvolume.md): grant this access point to "default", as an admin would.
	grants := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: sharedvolume.GrantsConfigMap, Namespace: namespace},
		Data:       map[string]string{"default": s.apHandle},
	}
	if _, err := s.kube.CoreV1().ConfigMaps(namespace).Create(ctx, grants, metav1.CreateOptions{}); err != nil {
		t.Fatalf("granting %s to namespace default: %v", s.apHandle, err)
	}
	sv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "aws-efs.managed.openshift.io/v1alpha1", "kind": "SharedVolume",
		"metadata": map[string]any{"name": "team", "namespace": "default"},
		"spec":     map[string]any{"fileSystemID": fsID, "accessPointID": apID},
	}}
	if _, err := s.dyn.Resource(sharedvolume.GroupVersionResource).Namespace("default").Create(ctx, sv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var claim string
	eventually(t, 2*time.Minute, "SharedVolume default/team Ready with its claim Bound", func(ctx context.Context) error {
		got, err := s.dyn.Resource(sharedvolume.GroupVersionResource).Namespace("default").Get(ctx, "team", metav1.GetOptions{})
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		claim, _, _ = unstructured.NestedString(got.Object, "status", "claimRef", "name")
		if phase != string(sharedvolume.PhaseReady) || claim == "" {
			msg, _, _ := unstructured.NestedString(got.Object, "status", "message")
			return fmt.Errorf("phase %q claim %q: %s", phase, claim, msg)
		}
		pvc, err := s.kube.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim %s %s", claim, pvc.Status.Phase)
		}
		pv, err := s.kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pv.Spec.CSI == nil || pv.Spec.CSI.VolumeHandle != s.apHandle {
			return fmt.Errorf("claim %s bound to %s with CSI source %+v; want handle %s", claim, pv.Name, pv.Spec.CSI, s.apHandle)
		}
		return nil
	})
	return claim
}

// runPod runs the tools image's shell with script on claim (mounted at /data) and checks that the pod succeeds
// and its log holds want.
func (s *stack) runPod(t *testing.T, name, claim, script, want string) {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: s.shellImage(t), ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"/bin/sh", "-c", script}, VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
	if _, err := s.kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "pod "+name+" Succeeded", func(ctx context.Context) error {
		p, err := s.kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodFailed {
			logs, _ := s.kube.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
			t.Fatalf("pod %s failed: %s; log:\n%s", name, p.Status.Message, logs)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	logs, err := s.kube.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(logs), want) {
		t.Errorf("pod %s log %q, %v; want %q", name, logs, err, want)
	}
	if err := s.kube.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
}

// shellImage is the tools image (the efs-utils base), which has a shell.
func (s *stack) shellImage(t *testing.T) string {
	t.Helper()
	images, err := ReadImages(stackDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range images {
		if im.Placeholder == "TOOLS_IMAGE" {
			return im.Ref
		}
	}
	t.Fatal("no TOOLS_IMAGE in the stack's pins")
	return ""
}

func (s *stack) createClusterCSIDriver(t *testing.T) {
	t.Helper()
	_, err := s.ops.OperatorV1().ClusterCSIDrivers().Create(t.Context(), &opv1.ClusterCSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: driverName},
		Spec:       opv1.ClusterCSIDriverSpec{OperatorSpec: opv1.OperatorSpec{ManagementState: opv1.Managed}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func (s *stack) setManagementState(t *testing.T, state opv1.ManagementState) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cr, err := s.ops.OperatorV1().ClusterCSIDrivers().Get(t.Context(), driverName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cr.Spec.ManagementState = state
		_, err = s.ops.OperatorV1().ClusterCSIDrivers().Update(t.Context(), cr, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("setting managementState %s: %v", state, err)
	}
}

// waitDeployment waits until the Deployment has all its replicas updated and ready, and every container of its
// pods is ready and has never restarted (a fresh install has no reason to crash).
func (s *stack) waitDeployment(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "Deployment "+name+" ready", func(ctx context.Context) error {
		d, err := s.kube.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != want || d.Status.ReadyReplicas != want || d.Status.Replicas != want {
			return fmt.Errorf("replicas %d updated %d ready %d, want %d", d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, want)
		}
		return s.podsReady(ctx, namespace, d.Spec.Selector)
	})
}

// waitDaemonSet waits until the DaemonSet runs an up-to-date ready pod on the node with every container ready.
func (s *stack) waitDaemonSet(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "DaemonSet "+name+" ready", func(ctx context.Context) error {
		d, err := s.kube.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.DesiredNumberScheduled != 1 || d.Status.UpdatedNumberScheduled != 1 || d.Status.NumberReady != 1 {
			return fmt.Errorf("desired %d updated %d ready %d, want 1", d.Status.DesiredNumberScheduled, d.Status.UpdatedNumberScheduled, d.Status.NumberReady)
		}
		return s.podsReady(ctx, namespace, d.Spec.Selector)
	})
}

// podsReady reports an error while a pod of ns that sel selects is missing, terminating, not ready or restarted.
func (s *stack) podsReady(ctx context.Context, ns string, sel *metav1.LabelSelector) error {
	pods, err := s.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(sel)})
	if err != nil {
		return err
	}
	if len(pods.Items) == 0 {
		return errors.New("no pods")
	}
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp != nil {
			return fmt.Errorf("pod %s is terminating", pod.Name)
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if !cs.Ready {
				return fmt.Errorf("pod %s container %s not ready", pod.Name, cs.Name)
			}
			if cs.RestartCount > 0 {
				return fmt.Errorf("pod %s container %s restarted %d times", pod.Name, cs.Name, cs.RestartCount)
			}
		}
		if len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) {
			return fmt.Errorf("pod %s: %d container statuses for %d containers", pod.Name, len(pod.Status.ContainerStatuses), len(pod.Spec.Containers))
		}
	}
	return nil
}

// waitAvailable waits until every *Available condition of the ClusterCSIDriver is True (and there are some),
// and no *Degraded condition is True.
func (s *stack) waitAvailable(t *testing.T, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "ClusterCSIDriver Available and not Degraded", func(ctx context.Context) error {
		cr, err := s.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, driverName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var available, bad []string
		for _, c := range cr.Status.Conditions {
			switch {
			case strings.HasSuffix(c.Type, "Available") && c.Status == opv1.ConditionTrue:
				available = append(available, c.Type)
			case strings.HasSuffix(c.Type, "Available"), strings.HasSuffix(c.Type, "Degraded") && c.Status == opv1.ConditionTrue:
				bad = append(bad, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%s", strings.Join(bad, "; "))
		}
		if len(available) < 2 {
			return fmt.Errorf("Available conditions %v: want the controller's and the node's", available)
		}
		return nil
	})
}

// driverGone reports an error while the driver's Deployment, DaemonSet or any of their pods exists.
func (s *stack) driverGone(ctx context.Context) error {
	if _, err := s.kube.AppsV1().Deployments(namespace).Get(ctx, controllerName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("Deployment %s still there (%v)", controllerName, err)
	}
	if _, err := s.kube.AppsV1().DaemonSets(namespace).Get(ctx, nodeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("DaemonSet %s still there (%v)", nodeName, err)
	}
	pods, err := s.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if app := p.Labels["app"]; app == controllerName || app == nodeName {
			return fmt.Errorf("pod %s still there (%s)", p.Name, p.Status.Phase)
		}
	}
	return nil
}

// writeVerbs are the verbs that change objects.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// ours reports whether the audit event's user is one of our ServiceAccounts.
func ours(e cluster.AuditEvent) bool {
	for _, sa := range ourServiceAccounts {
		if e.User.Username == cluster.ServiceAccountUser(namespace, sa) {
			return true
		}
	}
	return false
}

// writes are the requests of our ServiceAccounts that changed objects, except leader-election lease renewals
// (a lease is renewed every few seconds by design) and the Events that report a lease changing hands (a sidecar
// that misses its renew deadline on a loaded machine takes the lease again and says so), and the TokenReviews and
// SubjectAccessReviews the metrics proxies create to authorize scrapes (they store nothing).
func (s *stack) writes(t *testing.T) []cluster.AuditEvent {
	t.Helper()
	all, err := s.c.ControlPlane().AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var out []cluster.AuditEvent
	for _, e := range all {
		if !ours(e) || !writeVerbs[e.Verb] || e.ObjectRef == nil {
			continue
		}
		switch e.ObjectRef.Resource {
		case "leases", "tokenreviews", "subjectaccessreviews":
			continue
		case "events":
			if s.leaseEvent(t, e.ObjectRef.Namespace, e.ObjectRef.Name) {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// leaseEvent tells whether the Event namespace/name is about a Lease (leader election); the audit log records
// only the Event's name, so it is read back.
func (s *stack) leaseEvent(t *testing.T, namespace, name string) bool {
	t.Helper()
	ev, err := s.kube.CoreV1().Events(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	return ev.InvolvedObject.Kind == "Lease"
}

// steadyWindow is how long a steady install must go without writes: longer than library-go's one-minute resync
// of the operator's workload controllers.
const steadyWindow = 70 * time.Second

// waitQuiet waits until our ServiceAccounts have written nothing for 15 s (at most 3 minutes).
func (s *stack) waitQuiet(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		n := len(s.writes(t))
		time.Sleep(15 * time.Second)
		w := s.writes(t)
		if len(w) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("our ServiceAccounts never stop writing; the last writes:\n  %s", joinEvents(w[max(0, len(w)-20):]))
		}
	}
}

// checkNoWritesWhenSteady checks that our ServiceAccounts, but those named in except, write nothing for
// steadyWindow. Call it once they are quiet (waitQuiet).
func (s *stack) checkNoWritesWhenSteady(t *testing.T, except ...string) {
	t.Helper()
	counted := func() []cluster.AuditEvent {
		var out []cluster.AuditEvent
		for _, e := range s.writes(t) {
			if !slices.ContainsFunc(except, func(sa string) bool { return e.User.Username == cluster.ServiceAccountUser(namespace, sa) }) {
				out = append(out, e)
			}
		}
		return out
	}
	n := len(counted())
	time.Sleep(steadyWindow)
	if w := counted()[n:]; len(w) > 0 {
		t.Errorf("steady install: %d writes over %s (more than one resync) by our ServiceAccounts but %v, want none:\n  %s", len(w), steadyWindow, except, joinEvents(w))
	}
}

// checkNoDenials checks the audit log for requests of our ServiceAccounts the API server refused (401, 403).
func (s *stack) checkNoDenials(t *testing.T) {
	t.Helper()
	all, err := s.c.ControlPlane().AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var denied []cluster.AuditEvent
	seen := 0
	for _, e := range all {
		if !ours(e) {
			continue
		}
		seen++
		if e.Code() == 401 || e.Code() == 403 {
			denied = append(denied, e)
		}
	}
	if seen == 0 {
		t.Fatal("no request of our ServiceAccounts in the audit log; the check would prove nothing")
	}
	if len(denied) > 0 {
		t.Errorf("%d requests of our ServiceAccounts denied:\n  %s", len(denied), joinEvents(denied))
	}
}

func joinEvents(es []cluster.AuditEvent) string {
	lines := make([]string, 0, len(es))
	for _, e := range es {
		lines = append(lines, e.String())
	}
	return strings.Join(lines, "\n  ")
}

// eventually retries check every second until it succeeds or timeout passes, then fails with its last error.
func eventually(t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) error) {
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
		time.Sleep(time.Second)
	}
}

// missing returns, for each path that does not exist, its topmost missing ancestor (what creating it creates),
// each once.
func missing(paths []string) []string {
	set := map[string]bool{}
	for _, p := range paths {
		top := ""
		for d := p; d != "/" && d != "."; d = filepath.Dir(d) {
			if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
				break
			}
			top = d
		}
		if top != "" {
			set[top] = true
		}
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
