//go:build cluster

package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/openshift/aws-efs-csi/testharness/suites/olm"
)

// NextImagesDirEnv names the project's images built as the next release (the same tree with the patch versions
// of the operator and the driver raised), which `go tool mage test` prepares with StackDir/NextDir.
const NextImagesDirEnv = "AWS_EFS_CSI_CLUSTER_IMAGES_NEXT"

// NextDir is the next release's stack directory inside the stack directory: its images, pins, bundle, bundle
// image, and the catalog of this release with the next bundle added (it replaces this one in the channel).
const NextDir = "next"

// TestOLMInstallsAndUpgradesTheOperator starts from what the community aws-efs-operator leaves behind
// (leaveCommunityInstall: its node DaemonSet, CSIDriver, a SharedVolume and an application pod on it), installs
// release N through OLM (installWithOLM: from our catalog and bundle image, as the user guide says), sees the info
// alert while no ClusterCSIDriver exists, and lets the operator install the driver from the ClusterCSIDriver,
// taking over from the community driver without disturbing the application (takenOver). It then runs an
// application pod that keeps appending to a file on a dynamically provisioned EFS volume, then publishes the
// catalog holding N+1 (another build of this tree with higher versions): OLM upgrades the CSV, the operator rolls
// the driver's node DaemonSet to the new driver image, the application pod is never restarted and its data stays
// readable through the new node plugin, and a new claim is provisioned after the upgrade. Through it all the API
// server denies no request of our ServiceAccounts.
func TestOLMInstallsAndUpgradesTheOperator(t *testing.T) {
	nextImages := os.Getenv(NextImagesDirEnv)
	if nextImages == "" {
		t.Fatalf("%s is not set: run the suite with `go tool mage test` or `go tool mage cluster:stack`, which build the next release", NextImagesDirEnv)
	}
	next := filepath.Join(stackDir, NextDir)
	nextPins, err := ReadImages(next)
	if err != nil {
		t.Fatal(err)
	}
	s := startPlatform(t)
	ctx := t.Context()
	if _, err := s.c.LoadProjectImages(ctx, nextImages, testWriter{t}); err != nil {
		t.Fatalf("loading the next release's images: %v", err)
	}
	for _, im := range nextPins {
		if im.Archive != "" {
			if err := s.c.ImportImage(ctx, im.Archive); err != nil {
				t.Fatal(err)
			}
		}
	}
	community := s.leaveCommunityInstall(t)
	s.installWithOLM(t)
	oldCSV := installedCSV(t, s)
	s.clusterCSIDriverMissingAlert(t, community)
	if !t.Run("driver ready", func(t *testing.T) {
		s.createClusterCSIDriver(t)
		s.waitDeployment(t, controllerName, 5*time.Minute)
		s.waitDaemonSet(t, nodeName, 5*time.Minute)
		s.waitAvailable(t, 2*time.Minute)
	}) {
		return
	}
	if !t.Run("takeover from the community operator", func(t *testing.T) { s.takenOver(t, community) }) {
		return
	}
	if !t.Run("dynamic volume", func(t *testing.T) { s.dynamicVolumeBound(t) }) {
		return
	}
	app := s.startAppOn(t, "app", "shared", "before-upgrade")

	if _, err := olm.LoadLayout(ctx, s.c, filepath.Join(next, BundleImageDir, BundleImageName), BundleRepository, filepath.Join(t.TempDir(), "bundle")); err != nil {
		t.Fatalf("loading the next bundle image: %v", err)
	}
	start := time.Now()
	if err := olm.PublishCatalog(ctx, s.kube, s.dyn, catalogSource, catalogSource+"-next", filepath.Join(next, CatalogDir)); err != nil {
		t.Fatal(err)
	}
	var newCSV string
	eventually(t, 8*time.Minute, "Subscription upgraded to the next CSV, Succeeded", func(ctx context.Context) error {
		newCSV = installedCSVName(ctx, s)
		if newCSV == "" || newCSV == oldCSV {
			return fmt.Errorf("installed CSV %q", newCSV)
		}
		c, err := s.dyn.Resource(olm.ClusterServiceVersions).Namespace(namespace).Get(ctx, newCSV, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(c.Object, "status", "phase"); phase != "Succeeded" {
			return fmt.Errorf("CSV %s phase %s", newCSV, phase)
		}
		return nil
	})
	t.Logf("OLM upgraded %s to %s in %s", oldCSV, newCSV, time.Since(start).Round(time.Second))
	want := map[string]string{}
	for _, im := range nextPins {
		want[im.Placeholder] = im.Ref
	}
	eventually(t, 5*time.Minute, "operator and node DaemonSet on the next images", func(ctx context.Context) error {
		d, err := s.kube.AppsV1().Deployments(namespace).Get(ctx, operatorName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != want["OPERATOR_IMAGE"] {
			return fmt.Errorf("operator runs %s, want %s", got, want["OPERATOR_IMAGE"])
		}
		ds, err := s.kube.AppsV1().DaemonSets(namespace).Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range ds.Spec.Template.Spec.Containers {
			if c.Image == want["DRIVER_IMAGE"] {
				return nil
			}
		}
		return fmt.Errorf("node DaemonSet containers %v do not run %s", ds.Spec.Template.Spec.Containers, want["DRIVER_IMAGE"])
	})
	s.waitDeployment(t, operatorName, 3*time.Minute)
	s.waitDaemonSet(t, nodeName, 5*time.Minute)
	s.waitDeployment(t, controllerName, 5*time.Minute)

	s.appNeverRestarted(t, app)
	s.appNeverRestarted(t, community.app)
	s.runPod(t, "reader", "shared",
		`a=$(wc -l < /data/app.log); sleep 3; b=$(wc -l < /data/app.log); [ "$b" -gt "$a" ] && echo "first=$(head -1 /data/app.log) growing"`,
		"first=before-upgrade growing")
	// The new controller's csi-provisioner takes over its leader election lease only when the old pod's expires
	// (csi-provisioner does not release it on exit; library-go fills in OpenShift's 137 s lease and 26 s retry
	// period): provisioning pauses up to about 163 s.
	start = time.Now()
	s.claimBound(t, "after-upgrade", 5*time.Minute)
	t.Logf("a claim created after the upgrade was Bound in %s", time.Since(start).Round(time.Second))
	s.checkNoDenials(t)
}

// startAppOn runs an application pod in default: it appends first to app.log on the claim, then a line a second.
func (s *stack) startAppOn(t *testing.T, name, claim, first string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{
				Name: "main", Image: s.shellImage(t), ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"/bin/sh", "-c", `echo ` + first + ` >> /data/app.log; while true; do date >> /data/app.log; sleep 1; done`},
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
	eventually(t, 3*time.Minute, "application pod "+name+" running", func(ctx context.Context) error {
		p, err := s.kube.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	return created
}

// appNeverRestarted checks that app is the same pod, running, its container never restarted.
func (s *stack) appNeverRestarted(t *testing.T, app *corev1.Pod) {
	t.Helper()
	p, err := s.kube.CoreV1().Pods("default").Get(t.Context(), app.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != app.UID || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("application pod %s: UID %s (was %s), phase %s, statuses %+v; want the same pod running, never restarted", app.Name, p.UID, app.UID, p.Status.Phase, p.Status.ContainerStatuses)
	}
}

// claimBound creates a claim of the StorageClass efs-sc and waits until it is Bound.
func (s *stack) claimBound(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	sc := "efs-sc"
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &sc,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := s.kube.CoreV1().PersistentVolumeClaims("default").Create(t.Context(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "claim default/"+name+" Bound", func(ctx context.Context) error {
		c, err := s.kube.CoreV1().PersistentVolumeClaims("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("phase %s", c.Status.Phase)
		}
		return nil
	})
}

func installedCSV(t *testing.T, s *stack) string {
	t.Helper()
	name := installedCSVName(t.Context(), s)
	if name == "" {
		t.Fatal("the Subscription names no installed CSV")
	}
	return name
}

func installedCSVName(ctx context.Context, s *stack) string {
	u, err := s.dyn.Resource(olm.Subscriptions).Namespace(namespace).Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	name, _, _ := unstructured.NestedString(u.Object, "status", "installedCSV")
	return name
}
