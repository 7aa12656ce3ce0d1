//go:build cluster

package olm

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/operator/test/e2e/localcluster"
)

var (
	bins  cluster.Binaries
	tools string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		var err error
		if tools, err = cluster.ToolsDir(os.Getenv); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
			bins, err = cluster.Build(ctx, tools, os.Stderr)
			if err == nil {
				for _, t := range []cluster.Tool{Tools.OLM, Tools.Catalog, Tools.CPB, Tools.OPM} {
					start := time.Now()
					if _, err = cluster.BuildTool(ctx, tools, t, os.Stderr); err != nil {
						break
					}
					fmt.Fprintf(os.Stderr, "olm: %s ready in %s\n", t.Name, time.Since(start).Round(time.Second))
				}
			}
			cancel()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "olm: building the tools: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// testPackage is a minimal operator packaged as OLM packages ours: a registry+v1 bundle image (by digest) whose
// CSV installs a Deployment (the pause image) with a ServiceAccount and cluster permissions, in a file-based
// catalog. It proves OLM's machinery (catalog, resolution, bundle unpack Job, install strategy) independently of
// our operator's images.
const testPackage = "olm-e2e-operator"

func writeTestBundle(t *testing.T, dir string) {
	t.Helper()
	csv := map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": testPackage + ".v0.1.0", "annotations": map[string]any{"capabilities": "Basic Install"}},
		"spec": map[string]any{
			"displayName": "OLM e2e operator", "version": "0.1.0", "maturity": "alpha",
			"installModes": []any{
				map[string]any{"type": "OwnNamespace", "supported": false},
				map[string]any{"type": "SingleNamespace", "supported": false},
				map[string]any{"type": "MultiNamespace", "supported": false},
				map[string]any{"type": "AllNamespaces", "supported": true},
			},
			"install": map[string]any{
				"strategy": "deployment",
				"spec": map[string]any{
					"clusterPermissions": []any{map[string]any{
						"serviceAccountName": testPackage,
						"rules":              []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get", "list"}}},
					}},
					"deployments": []any{map[string]any{
						"name": testPackage,
						"spec": map[string]any{
							"replicas": 1,
							"selector": map[string]any{"matchLabels": map[string]any{"app": testPackage}},
							"template": map[string]any{
								"metadata": map[string]any{"labels": map[string]any{"app": testPackage}},
								"spec": map[string]any{
									"serviceAccountName": testPackage,
									"containers": []any{map[string]any{
										"name": "operator", "image": localcluster.PauseImage, "imagePullPolicy": "IfNotPresent",
									}},
								},
							},
						},
					}},
				},
			},
		},
	}
	annotations := "annotations:\n" +
		"  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n" +
		"  operators.operatorframework.io.bundle.manifests.v1: manifests/\n" +
		"  operators.operatorframework.io.bundle.metadata.v1: metadata/\n" +
		"  operators.operatorframework.io.bundle.package.v1: " + testPackage + "\n" +
		"  operators.operatorframework.io.bundle.channels.v1: stable\n" +
		"  operators.operatorframework.io.bundle.channel.default.v1: stable\n"
	b, err := json.MarshalIndent(csv, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{
		"manifests/" + testPackage + ".clusterserviceversion.yaml": b, // JSON is YAML
		"metadata/annotations.yaml":                                []byte(annotations),
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeTestCatalog(t *testing.T, dir, bundleRef string) {
	t.Helper()
	docs := []map[string]any{
		{"schema": "olm.package", "name": testPackage, "defaultChannel": "stable"},
		{"schema": "olm.channel", "package": testPackage, "name": "stable", "entries": []any{map[string]any{"name": testPackage + ".v0.1.0"}}},
		{"schema": "olm.bundle", "name": testPackage + ".v0.1.0", "package": testPackage, "image": bundleRef,
			"properties": []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": testPackage, "version": "0.1.0"}}}},
	}
	var sb strings.Builder
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		sb.Write(b)
		sb.WriteString("\n")
	}
	if err := os.MkdirAll(filepath.Join(dir, testPackage), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, testPackage, "catalog.json"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOLMInstallsAnOperatorFromACatalog installs OLM on the local cluster, serves a catalog, subscribes to its
// package as docs/user-guide/install.md says, and checks that the CSV succeeds, that OLM unpacked the bundle
// image with a Job, and that the Deployment OLM made from the CSV runs.
func TestOLMInstallsAnOperatorFromACatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("the local cluster needs the Kubernetes binaries, which -short does not build")
	}
	ctx := t.Context()
	work := t.TempDir()
	c, kube, dyn := startWithOLM(t, work)
	start := time.Now()
	bundleDir := filepath.Join(work, "bundle")
	writeTestBundle(t, bundleDir)
	img, err := bundleImage(bundleDir, map[string]string{"operators.operatorframework.io.bundle.package.v1": testPackage})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(work, "bundle.tar")
	ref, err := localcluster.WriteDigestArchive(img, repository+testPackage+"-bundle", archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	catalogDir := filepath.Join(work, "catalog")
	writeTestCatalog(t, catalogDir, ref)
	if err := ServeCatalog(ctx, kube, dyn, "e2e-catalog", catalogDir); err != nil {
		t.Fatal(err)
	}
	if err := Subscribe(ctx, kube, dyn, "olm-e2e", testPackage, "stable", "e2e-catalog"); err != nil {
		t.Fatal(err)
	}
	csv, err := WaitCSV(ctx, dyn, "olm-e2e", testPackage, "Succeeded", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CSV %s Succeeded %s after OLM started", csv, time.Since(start).Round(time.Second))
	if want := testPackage + ".v0.1.0"; csv != want {
		t.Errorf("installed CSV %s; want %s", csv, want)
	}
	if ok, err := BundleUnpacked(ctx, kube); err != nil || !ok {
		t.Errorf("no bundle unpack Job succeeded in %s (%v): OLM did not install from the bundle image", Namespace, err)
	}
	if err := WaitDeploymentAvailable(ctx, kube, "olm-e2e", testPackage, 2*time.Minute); err != nil {
		t.Error(err)
	}
	pods, err := kube.CoreV1().Pods("olm-e2e").List(ctx, metav1.ListOptions{LabelSelector: "app=" + testPackage})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning || pods.Items[0].Spec.ServiceAccountName != testPackage {
		t.Errorf("pods of the operator Deployment OLM made: %v %+v; want one running as %s", err, pods, testPackage)
	}
}

// startWithOLM starts a local cluster (stopped at the end of the test, after diagnostics when it failed) and
// installs OLM on it.
func startWithOLM(t *testing.T, work string) (*localcluster.Cluster, kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	ctx := t.Context()
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: t.TempDir(), Binaries: bins, Log: testWriter{t}})
	if err != nil {
		t.Fatalf("starting the local cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			c.Diagnose(context.WithoutCancel(ctx), &b)
			t.Log(b.String())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the local cluster: %v", err)
		}
	})
	start := time.Now()
	if err := Install(ctx, c, tools, filepath.Join(work, "images"), testWriter{t}); err != nil {
		t.Fatalf("installing OLM: %v", err)
	}
	t.Logf("OLM installed in %s", time.Since(start).Round(time.Second))
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c, kube, dyn
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
