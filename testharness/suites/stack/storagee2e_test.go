//go:build cluster

package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/olm"
	"github.com/openshift/aws-efs-csi/testharness/suites/storagee2e"
)

// minStoragePassed is the fewest external storage tests the selection must pass: a run that passes fewer has
// lost tests (a capability or a focus that no longer matches), which would otherwise look like a clean run.
const minStoragePassed = 32

// storageProcs is how many processes run the storage tests at once: most of a test's time is spent waiting for
// pods and claims, so more processes than the two cores still shorten the run.
const storageProcs = 6

// kubernetesStorageTests runs Kubernetes' external storage tests (e2e.test at the cluster's version with our test
// driver file) against the driver the operator installed: their pods run a stand-in for the e2e test images
// (registry.k8s.io is not reachable), their claims are provisioned through the StorageClass the file names.
func (s *stack) kubernetesStorageTests(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	refs, err := storagee2e.ImagesToStandIn(ctx, e2e.Test, dir)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "e2e-images.tar")
	if err := storagee2e.WriteStandInImages(ctx, olm.Busybox, e2e.Agnhost, refs, archive); err != nil {
		t.Fatal(err)
	}
	if err := s.c.ImportImage(ctx, archive); err != nil {
		t.Fatalf("loading the stand-in e2e images %v: %v", refs, err)
	}
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: storagee2e.StorageClassName},
		Provisioner: driverName,
		// 777: on EFS the access point maps every client to its POSIX user, so a test pod of any user can write;
		// the stand-in's bind mount enforces no access point user, so the directory has to let them.
		Parameters: map[string]string{"provisioningMode": "efs-ap", "fileSystemId": s.aws.RegionalFileSystemID, "directoryPerms": "777"},
	}
	if _, err := s.kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.kube.StorageV1().StorageClasses().Delete(ctx, sc.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting StorageClass %s: %v", sc.Name, err)
		}
	}()
	logPath := filepath.Join(dir, "e2e.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	started := time.Now()
	rep, err := storagee2e.Run(ctx, storagee2e.Options{
		E2ETest: e2e.Test, Ginkgo: e2e.Ginkgo, Kubeconfig: s.c.Kubeconfig, Dir: dir, Procs: storageProcs,
		Timeout: 20 * time.Minute, Log: logFile,
	})
	t.Logf("Kubernetes %s external storage tests in %s: %s", cluster.KubernetesVersion, time.Since(started).Round(time.Second), rep)
	if err != nil || len(rep.Failed) > 0 {
		t.Logf("e2e.test output (the end):\n%s", tail(logPath, 400))
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failed {
		t.Errorf("failed: %s", f.Name)
	}
	// The tests delete their claims without waiting for every volume to go: wait, so that a volume the driver
	// fails to delete (a leaked access point) fails here, and the provisioning storm that follows starts from the
	// suite's own volumes only. Their StorageClasses are copies named <namespace>-e2e-sc<suffix>.
	eventually(t, 3*time.Minute, "the storage tests' volumes deleted", func(ctx context.Context) error {
		pvs, err := s.kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var left []string
		for _, pv := range pvs.Items {
			if strings.Contains(pv.Spec.StorageClassName, "-e2e-sc") {
				left = append(left, pv.Name+" ("+string(pv.Status.Phase)+")")
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("%d left: %s", len(left), strings.Join(left, ", "))
		}
		return nil
	})
	if len(rep.Passed) < minStoragePassed {
		t.Errorf("%d tests passed, want at least %d: the selection (focus %q, skip %q) or the test driver file lost tests",
			len(rep.Passed), minStoragePassed, storagee2e.Focus, storagee2e.Skip)
	}
}
