package olm

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// GVRs of OLM's resources.
var (
	CatalogSources         = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "catalogsources"}
	Subscriptions          = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "subscriptions"}
	ClusterServiceVersions = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
	InstallPlans           = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "installplans"}
	OperatorGroups         = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1", Resource: "operatorgroups"}
)

// registryPort is where opm serves the registry gRPC API.
const registryPort = 50051

// ServeCatalog serves the file-based catalog in dir (what `go tool mage catalog` writes) as the CatalogSource
// name in Namespace: the files in a ConfigMap, mounted into a pod running `opm serve`, behind a Service whose
// ClusterIP the CatalogSource names in spec.address (the cluster has no DNS; OLM dials the address as given).
// It waits until OLM reports the catalog's connection READY.
func ServeCatalog(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, name, dir string) error {
	address, err := serveRegistry(ctx, kube, name, dir)
	if err != nil {
		return err
	}
	cs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"name": name, "namespace": Namespace},
		"spec": map[string]any{
			"sourceType": "grpc", "address": address,
			"displayName": name, "publisher": "aws-efs-csi e2e",
		},
	}}
	if _, err := dyn.Resource(CatalogSources).Namespace(Namespace).Create(ctx, cs, metav1.CreateOptions{}); err != nil {
		return err
	}
	return waitCatalogReady(ctx, dyn, name, address)
}

// PublishCatalog publishes a new content of the CatalogSource name, the catalog in dir: served by a new registry
// (named registry) whose address replaces the CatalogSource's, as a catalog image's new digest would be rolled
// out. It waits until OLM reports the new connection READY.
func PublishCatalog(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, name, registry, dir string) error {
	address, err := serveRegistry(ctx, kube, registry, dir)
	if err != nil {
		return err
	}
	patch := []byte(fmt.Sprintf(`{"spec":{"address":%q}}`, address))
	if _, err := dyn.Resource(CatalogSources).Namespace(Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	return waitCatalogReady(ctx, dyn, name, address)
}

// serveRegistry runs `opm serve` of the catalog in dir as the pod and Service name in Namespace and returns the
// Service's address.
func serveRegistry(ctx context.Context, kube kubernetes.Interface, name, dir string) (string, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-configs", Namespace: Namespace}, Data: map[string]string{}}
	var items []corev1.KeyToPath
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		key := strings.NewReplacer("/", "_", "~", "_").Replace(rel)
		cm.Data[key] = string(b)
		items = append(items, corev1.KeyToPath{Key: key, Path: "catalog/" + rel})
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading the catalog %s: %w", dir, err)
	}
	if len(items) == 0 {
		return "", fmt.Errorf("catalog directory %s has no files", dir)
	}
	if _, err := kube.CoreV1().ConfigMaps(Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	labels := map[string]string{"olm-catalog": name}
	grpc := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: registryPort}}, PeriodSeconds: 2}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-registry", Namespace: Namespace, Labels: labels},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1001))},
			Volumes: []corev1.Volume{
				{Name: "configs", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, Items: items}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Containers: []corev1.Container{{
				Name: "registry", Image: OPMImage, ImagePullPolicy: corev1.PullIfNotPresent,
				// Not the volume's root: a ConfigMap volume keeps its files behind a "..data" directory that opm
				// would read as part of the catalog.
				Args:           []string{"serve", "/configs/catalog", "--port", fmt.Sprint(registryPort)},
				Ports:          []corev1.ContainerPort{{Name: "grpc", ContainerPort: registryPort}},
				ReadinessProbe: grpc,
				VolumeMounts: []corev1.VolumeMount{
					{Name: "configs", MountPath: "/configs", ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"},
				},
			}},
		},
	}
	if _, err := kube.CoreV1().Pods(Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	svc, err := kube.CoreV1().Services(Namespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "grpc", Port: registryPort, TargetPort: intstr.FromInt32(registryPort)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s:%d", svc.Spec.ClusterIP, registryPort), nil
}

// waitCatalogReady waits until OLM reports the CatalogSource name connected READY to address.
func waitCatalogReady(ctx context.Context, dyn dynamic.Interface, name, address string) error {
	var state string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(CatalogSources).Namespace(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		state, _, _ = unstructured.NestedString(u.Object, "status", "connectionState", "lastObservedState")
		at, _, _ := unstructured.NestedString(u.Object, "status", "connectionState", "address")
		return state == "READY" && at == address, nil
	})
	if err != nil {
		return fmt.Errorf("CatalogSource %s/%s not READY at %s (last state %q): %w", Namespace, name, address, state, err)
	}
	return nil
}

// Subscribe creates namespace ns with an OperatorGroup for all namespaces (no targetNamespaces) and a
// Subscription to pkg's channel in the CatalogSource catalog (in Namespace) with automatic approval, as
// docs/user-guide/install.md tells users to.
func Subscribe(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, ns, pkg, channel, catalog string) error {
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	og := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
		"metadata": map[string]any{"name": ns, "namespace": ns},
		"spec":     map[string]any{"upgradeStrategy": "Default"},
	}}
	if _, err := dyn.Resource(OperatorGroups).Namespace(ns).Create(ctx, og, metav1.CreateOptions{}); err != nil {
		return err
	}
	sub := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": pkg, "namespace": ns},
		"spec": map[string]any{
			"channel": channel, "name": pkg, "source": catalog, "sourceNamespace": Namespace,
			"installPlanApproval": "Automatic",
		},
	}}
	_, err := dyn.Resource(Subscriptions).Namespace(ns).Create(ctx, sub, metav1.CreateOptions{})
	return err
}

// WaitCSV waits until the Subscription sub in ns names its installed CSV and that CSV is in phase (Succeeded, or
// an earlier phase for a check that cannot get further), and returns the CSV's name.
func WaitCSV(ctx context.Context, dyn dynamic.Interface, ns, sub, phase string, timeout time.Duration) (string, error) {
	var csv, last string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(Subscriptions).Namespace(ns).Get(ctx, sub, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		state, _, _ := unstructured.NestedString(u.Object, "status", "state")
		csv, _, _ = unstructured.NestedString(u.Object, "status", "installedCSV")
		last = "subscription state " + state + subscriptionConditions(u)
		if csv == "" {
			return false, nil
		}
		c, err := dyn.Resource(ClusterServiceVersions).Namespace(ns).Get(ctx, csv, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(c.Object, "status", "message")
		last = fmt.Sprintf("CSV %s phase %s: %s", csv, got, msg)
		return got == phase, nil
	})
	if err != nil {
		return csv, fmt.Errorf("subscription %s/%s: no CSV in phase %s after %s (%s): %w", ns, sub, phase, timeout, last, err)
	}
	return csv, nil
}

// BundleUnpacked reports whether a bundle unpack Job of OLM succeeded: the CSV came from a bundle image OLM
// unpacked, not from the catalog's own copy of the manifests.
func BundleUnpacked(ctx context.Context, kube kubernetes.Interface) (bool, error) {
	jobs, err := kube.BatchV1().Jobs(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "operatorframework.io/bundle-unpack-ref"})
	if err != nil {
		return false, err
	}
	for _, j := range jobs.Items {
		if j.Status.Succeeded > 0 {
			return true, nil
		}
	}
	return false, nil
}

func subscriptionConditions(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] == "True" {
			out = append(out, fmt.Sprintf("%v: %v", m["type"], m["message"]))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}
