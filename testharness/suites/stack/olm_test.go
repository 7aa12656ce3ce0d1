//go:build cluster

package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/olm"
)

// catalogSource is the CatalogSource serving the stack's catalog.
const catalogSource = "aws-efs-csi"

// installWithOLM installs OLM on the local cluster, serves the whole catalog `go tool mage catalog` writes for the
// bundle pinned to the stack's images, and subscribes as docs/user-guide/install.md says. OLM must resolve our
// package from that catalog, unpack our bundle image with a Job, and carry out the CSV's install strategy until the
// CSV is Succeeded with the operator's Deployment (made by OLM, running the pinned operator image) available.
func (s *stack) installWithOLM(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	tools, err := cluster.ToolsDir(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	start := time.Now()
	if err := olm.Install(ctx, s.c, tools, filepath.Join(work, "olm"), testWriter{t}); err != nil {
		t.Fatalf("installing OLM: %v", err)
	}
	t.Logf("OLM %s installed in %s", olm.Version, time.Since(start).Round(time.Second))
	ref, err := olm.LoadLayout(ctx, s.c, filepath.Join(stackDir, BundleImageDir, BundleImageName), BundleRepository, filepath.Join(work, "bundle"))
	if err != nil {
		t.Fatalf("loading the bundle image: %v", err)
	}
	catalog := filepath.Join(stackDir, CatalogDir)
	data, err := os.ReadFile(filepath.Join(catalog, operatorName, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "image: "+ref+"\n") {
		t.Fatalf("the catalog %s does not name the bundle image %s: it was not rendered from this bundle", catalog, ref)
	}
	if err := olm.ServeCatalog(ctx, s.kube, s.dyn, catalogSource, catalog); err != nil {
		t.Fatal(err)
	}
	s.started = time.Now()
	if err := olm.Subscribe(ctx, s.kube, s.dyn, namespace, operatorName, "stable", catalogSource); err != nil {
		t.Fatal(err)
	}
	csv, err := olm.WaitCSV(ctx, s.dyn, namespace, operatorName, "Succeeded", 8*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CSV %s Succeeded %s after the Subscription", csv, time.Since(s.started).Round(time.Second))
	if ok, err := olm.BundleUnpacked(ctx, s.kube); err != nil || !ok {
		t.Errorf("no bundle unpack Job succeeded in %s (%v): OLM did not install from our bundle image", olm.Namespace, err)
	}
	d, err := s.kube.AppsV1().Deployments(namespace).Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the operator Deployment OLM made: %v", err)
	}
	if d.Labels["olm.owner"] != csv {
		t.Errorf("Deployment %s labels %v; want olm.owner=%s (made by OLM from the CSV)", d.Name, d.Labels, csv)
	}
	images, err := ReadImages(stackDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range images {
		if im.Placeholder == "OPERATOR_IMAGE" && d.Spec.Template.Spec.Containers[0].Image != im.Ref {
			t.Errorf("the operator runs %s; the bundle pins %s", d.Spec.Template.Spec.Containers[0].Image, im.Ref)
		}
	}
	s.waitDeployment(t, operatorName, 2*time.Minute)
}
