package olm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

// Namespace is where OLM's operators run and where its global catalogs live (--namespace of catalog-operator).
const Namespace = "olm"

// serviceAccount is the identity of both OLM operators; it is bound to a ClusterRole with every permission, as
// OLM's own deployment does (OLM creates the RBAC of the operators it installs, so it must hold all of it).
const serviceAccount = "olm-operator-serviceaccount"

// Install builds OLM and opm (cached in toolsDir), loads their images into the cluster, installs OLM's CRDs (read
// from OLM's module at Version) and runs olm-operator and catalog-operator in Namespace, then waits until both
// Deployments are available. work is a scratch directory for the image archives.
func Install(ctx context.Context, c *localcluster.Cluster, toolsDir, work string, log io.Writer) error {
	bins, err := buildTools(ctx, toolsDir, log)
	if err != nil {
		return err
	}
	olmImg, err := localcluster.FilesImage([]localcluster.ImageFile{
		{Path: "/bin/olm", Source: bins.OLM}, {Path: "/bin/catalog", Source: bins.Catalog}, {Path: "/bin/cpb", Source: bins.CPB},
		{Path: Busybox, Source: Busybox}, {Path: "/bin/cp", Link: "busybox"},
	}, localcluster.ImageConfig{Entrypoint: []string{"/bin/olm"}, User: "1001"})
	if err != nil {
		return fmt.Errorf("OLM image (its cp is busybox: apt-get install busybox-static): %w", err)
	}
	opmImg, err := localcluster.FilesImage([]localcluster.ImageFile{{Path: "/bin/opm", Source: bins.OPM}},
		localcluster.ImageConfig{Entrypoint: []string{"/bin/opm"}, User: "1001"})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	olmArchive, opmArchive := filepath.Join(work, "olm.tar"), filepath.Join(work, "opm.tar")
	if err := writeTagged(olmImg, OLMImage, olmArchive); err != nil {
		return err
	}
	if err := writeTagged(opmImg, OPMImage, opmArchive); err != nil {
		return err
	}
	for _, a := range []string{olmArchive, opmArchive} {
		if err := c.ImportImage(ctx, a); err != nil {
			return err
		}
	}
	crds, err := olmCRDs(ctx)
	if err != nil {
		return err
	}
	if err := c.ControlPlane().InstallCRDs(ctx, crds...); err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if err := createOLM(ctx, kube); err != nil {
		return err
	}
	fmt.Fprintf(log, "olm: waiting for olm-operator and catalog-operator in namespace %s\n", Namespace)
	for _, name := range []string{"olm-operator", "catalog-operator"} {
		if err := WaitDeploymentAvailable(ctx, kube, Namespace, name, 3*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// olmCRDs reads OLM's CustomResourceDefinitions from its module at Version (deploy/chart/crds), the definitions
// that release ships.
func olmCRDs(ctx context.Context) ([][]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", olmModule+"@"+Version)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Dir = os.TempDir()
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %w", olmModule, Version, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(b, &info); err != nil || info.Dir == "" {
		return nil, fmt.Errorf("go mod download %s@%s: no Dir in %q: %v", olmModule, Version, b, err)
	}
	files, err := filepath.Glob(filepath.Join(info.Dir, "deploy", "chart", "crds", "*.crd.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s/deploy/chart/crds: %v", info.Dir, err)
	}
	var docs [][]byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// createOLM creates OLM's namespace, identity and the two operators, with the arguments OLM's own deployment
// gives them: catalog-operator runs catalogs' bundle unpack Jobs with OPMImage (opm) and OLMImage (cp, cpb), as
// user 1001; no ClusterOperator status (that is OpenShift's); metrics and health on HTTP 8080 (no serving
// certificates here).
func createOLM(ctx context.Context, kube kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: Namespace}}
	if _, err := kube.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:controller:operator-lifecycle-manager"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
		},
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "olm-operator-binding-" + Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: Namespace}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, d := range []*appsv1.Deployment{
		operatorDeployment("olm-operator", "/bin/olm", "--namespace", "$(OPERATOR_NAMESPACE)", "--writeStatusName", ""),
		operatorDeployment("catalog-operator", "/bin/catalog", "--namespace", Namespace,
			"--configmapServerImage", OPMImage, "--opmImage", OPMImage, "--util-image", OLMImage,
			"--writeStatusName", "", "--set-workload-user-id=true"),
	} {
		if _, err := kube.AppsV1().Deployments(Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func operatorDeployment(name, command string, args ...string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: serviceAccount,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{{Name: "tmpfs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					Containers: []corev1.Container{{
						Name: name, Image: OLMImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{command}, Args: args,
						Env: []corev1.EnvVar{
							{Name: "OPERATOR_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
							{Name: "OPERATOR_NAME", Value: name},
						},
						Ports:          []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080}},
						LivenessProbe:  probe,
						ReadinessProbe: probe,
						VolumeMounts:   []corev1.VolumeMount{{Name: "tmpfs", MountPath: "/tmp"}},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
				},
			},
		},
	}
}

// WaitDeploymentAvailable waits until the Deployment has every replica updated and available.
func WaitDeploymentAvailable(ctx context.Context, kube kubernetes.Interface, ns, name string, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		d, err := kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		last = fmt.Sprintf("%d/%d available, %d updated", d.Status.AvailableReplicas, want, d.Status.UpdatedReplicas)
		return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas == want && d.Status.UpdatedReplicas == want, nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s/%s not available after %s (%s): %w", ns, name, timeout, strings.TrimSpace(last), err)
	}
	return nil
}
