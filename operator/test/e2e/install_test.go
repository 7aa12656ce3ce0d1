package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	opv1 "github.com/openshift/api/operator/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// staticObjects are the driver's objects besides the workloads and CredentialsRequests (operator-inventory §2.1).
var staticObjects = []struct{ kind, namespace, name string }{
	{"CSIDriver", "", "efs.csi.aws.com"},
	{"ServiceAccount", namespace, "aws-efs-csi-driver-controller-sa"},
	{"ServiceAccount", namespace, "aws-efs-csi-driver-node-sa"},
	{"ClusterRole", "", "efs-privileged-role"},
	{"ClusterRoleBinding", "", "efs-controller-privileged-binding"},
	{"ClusterRoleBinding", "", "efs-node-privileged-binding"},
	{"ClusterRole", "", "efs-node-reader-role"},
	{"ClusterRoleBinding", "", "efs-node-reader-binding"},
	{"ClusterRoleBinding", "", "efs-csi-main-provisioner-binding"},
	{"ClusterRole", "", "efs-kube-rbac-proxy-role"},
	{"ClusterRoleBinding", "", "efs-kube-rbac-proxy-binding"},
	{"Role", namespace, "aws-efs-csi-driver-lease-leader-election"},
	{"RoleBinding", namespace, "aws-efs-csi-driver-lease-leader-election"},
	{"Role", namespace, "aws-efs-csi-driver-prometheus"},
	{"RoleBinding", namespace, "aws-efs-csi-driver-prometheus"},
	{"Service", namespace, "aws-efs-csi-driver-controller-metrics"},
	{"ServiceMonitor", namespace, "aws-efs-csi-driver-controller-monitor"},
	{"PodDisruptionBudget", namespace, "aws-efs-csi-driver-controller-pdb"},
	{"ConfigMap", namespace, "aws-efs-csi-driver-trusted-ca-bundle"},
}

// getStatic reads one static object; it returns a NotFound error when it does not exist.
func (e *env) getStatic(ctx context.Context, kind, ns, name string) (metav1.Object, error) {
	k := e.kube
	switch kind {
	case "CSIDriver":
		return k.StorageV1().CSIDrivers().Get(ctx, name, metav1.GetOptions{})
	case "ServiceAccount":
		return k.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	case "ClusterRole":
		return k.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	case "ClusterRoleBinding":
		return k.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
	case "Role":
		return k.RbacV1().Roles(ns).Get(ctx, name, metav1.GetOptions{})
	case "RoleBinding":
		return k.RbacV1().RoleBindings(ns).Get(ctx, name, metav1.GetOptions{})
	case "Service":
		return k.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	case "ServiceMonitor":
		return e.dyn.Resource(serviceMonitorGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	case "PodDisruptionBudget":
		return k.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
	case "ConfigMap":
		return k.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return nil, fmt.Errorf("unknown kind %s", kind)
}

// driverObjectsExist reports an error naming the first missing driver object.
func (e *env) driverObjectsExist(ctx context.Context) error {
	for _, o := range staticObjects {
		if _, err := e.getStatic(ctx, o.kind, o.namespace, o.name); err != nil {
			return fmt.Errorf("%s %s/%s: %w", o.kind, o.namespace, o.name, err)
		}
	}
	if _, err := e.kube.AppsV1().Deployments(namespace).Get(ctx, "aws-efs-csi-driver-controller", metav1.GetOptions{}); err != nil {
		return err
	}
	_, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{})
	return err
}

// TestInstallFromNothing covers a fresh install in mint mode: nothing happens before the ClusterCSIDriver exists;
// then every object of the driver appears with the reference fields; the steady state makes no writes over a
// full resync; Removed deletes the workloads only; deleting the ClusterCSIDriver removes the rest but keeps the
// CredentialsRequests.
func TestInstallFromNothing(t *testing.T) {
	e := newEnv(t)
	op := e.startOperator(testConfig())

	// Before the ClusterCSIDriver: the reminder alert and metric, nothing of the driver.
	eventually(t, time.Minute, "PrometheusRule with the missing-ClusterCSIDriver alert", func(ctx context.Context) error {
		rule, err := e.dyn.Resource(prometheusRuleGVR).Namespace(namespace).Get(ctx, "aws-efs-csi-driver-operator", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if b, _ := rule.MarshalJSON(); !strings.Contains(string(b), `"alert":"AWSEFSClusterCSIDriverMissing"`) || !strings.Contains(string(b), `"severity":"info"`) {
			return fmt.Errorf("rule without the info alert: %s", b)
		}
		if op.missing.v.Load() != 1 {
			return fmt.Errorf("missing gauge = %d, want 1", op.missing.v.Load())
		}
		return nil
	})
	// Bounded, as "not installed" has no event to wait on: the missing gauge above proves the operator has run and
	// seen no ClusterCSIDriver; its controllers start together and act on their informers' first events, so 3 s
	// more would have shown a CSIDriver or DaemonSet written without waiting for the ClusterCSIDriver.
	time.Sleep(3 * time.Second)
	if _, err := e.kube.StorageV1().CSIDrivers().Get(t.Context(), "efs.csi.aws.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("CSIDriver before the ClusterCSIDriver exists: err = %v, want NotFound", err)
	}
	if ds, _ := e.kube.AppsV1().DaemonSets(namespace).List(t.Context(), metav1.ListOptions{}); len(ds.Items) != 0 {
		t.Fatalf("DaemonSets before the ClusterCSIDriver exists: %d", len(ds.Items))
	}

	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, 2*time.Minute, "every driver object", e.driverObjectsExist)
	if op.missing.v.Load() != 0 {
		t.Errorf("missing gauge = %d after the ClusterCSIDriver was created, want 0", op.missing.v.Load())
	}
	e.checkInstalledObjects(t)

	e.checkSteadyState(t, op)

	// Removed: workloads go, everything else stays.
	cr := ok(e.ops.OperatorV1().ClusterCSIDrivers().Get(t.Context(), crName, metav1.GetOptions{}))(t)
	cr.Spec.ManagementState = opv1.Removed
	ok(e.ops.OperatorV1().ClusterCSIDrivers().Update(t.Context(), cr, metav1.UpdateOptions{}))(t)
	eventually(t, time.Minute, "workloads deleted in Removed", func(ctx context.Context) error {
		if _, err := e.kube.AppsV1().Deployments(namespace).Get(ctx, "aws-efs-csi-driver-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Deployment: %v", err)
		}
		if _, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("DaemonSet: %v", err)
		}
		return nil
	})
	for _, o := range staticObjects {
		if _, err := e.getStatic(t.Context(), o.kind, o.namespace, o.name); err != nil {
			t.Errorf("Removed deleted %s %s: %v", o.kind, o.name, err)
		}
	}

	// Back to Managed, then delete the ClusterCSIDriver: everything but the CredentialsRequests goes.
	cr = ok(e.ops.OperatorV1().ClusterCSIDrivers().Get(t.Context(), crName, metav1.GetOptions{}))(t)
	cr.Spec.ManagementState = opv1.Managed
	ok(e.ops.OperatorV1().ClusterCSIDrivers().Update(t.Context(), cr, metav1.UpdateOptions{}))(t)
	eventually(t, time.Minute, "workloads back in Managed", e.driverObjectsExist)
	e.uninstallWaitsForThePods(t)
	e.deleteClusterCSIDriver()
	eventually(t, time.Minute, "driver objects deleted", func(ctx context.Context) error {
		for _, o := range staticObjects {
			if _, err := e.getStatic(ctx, o.kind, o.namespace, o.name); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s %s still exists (%v)", o.kind, o.name, err)
			}
		}
		if _, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("DaemonSet still exists (%v)", err)
		}
		return nil
	})
	for _, name := range []string{"openshift-aws-efs-csi-driver", "openshift-aws-efs-csi-driver-node"} {
		if cr, err := e.credentialsRequest(t.Context(), name); err != nil || cr == nil {
			t.Errorf("CredentialsRequest %s after uninstall: %v, %v; want it kept", name, cr, err)
		}
	}
	eventually(t, 30*time.Second, "missing gauge back to 1", func(context.Context) error {
		if v := op.missing.v.Load(); v != 1 {
			return fmt.Errorf("gauge = %d", v)
		}
		return nil
	})
}

// uninstallWaitsForThePods deletes the ClusterCSIDriver while a pod of the controller's ServiceAccount exists
// (this API server has no kubelet, so the pod stays until deleted) and checks that the uninstaller keeps the RBAC
// until the pod is gone: a terminating csi-provisioner still renews its lease and must not be refused.
func (e *env) uninstallWaitsForThePods(t *testing.T) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "terminating-controller", Namespace: namespace},
		Spec: corev1.PodSpec{
			ServiceAccountName: "aws-efs-csi-driver-controller-sa",
			Containers:         []corev1.Container{{Name: "csi-provisioner", Image: "example.invalid/provisioner"}},
		},
	}
	ok(e.kube.CoreV1().Pods(namespace).Create(t.Context(), pod, metav1.CreateOptions{}))(t)
	if err := e.ops.OperatorV1().ClusterCSIDrivers().Delete(t.Context(), crName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "uninstall waiting for the controller's pod", func(ctx context.Context) error {
		cr, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, crName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range cr.Status.Conditions {
			if c.Type == "AWSEFSDriverUninstallControllerDegraded" && strings.Contains(c.Message, pod.Name) {
				return nil
			}
		}
		return fmt.Errorf("no uninstall condition naming %s: %+v", pod.Name, cr.Status.Conditions)
	})
	for _, o := range staticObjects {
		if o.kind != "RoleBinding" && o.kind != "ClusterRoleBinding" {
			continue
		}
		if _, err := e.getStatic(t.Context(), o.kind, o.namespace, o.name); err != nil {
			t.Errorf("%s %s deleted while a pod of the driver's ServiceAccount runs: %v", o.kind, o.name, err)
		}
	}
	zero := int64(0)
	if err := e.kube.CoreV1().Pods(namespace).Delete(t.Context(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

// checkSteadyState waits until the operator has settled and checks it writes nothing for longer than both the
// operator's resync and library-go's one-minute workload resync.
func (e *env) checkSteadyState(t *testing.T, op *runningOperator) {
	t.Helper()
	// Settle: no writes for 10 s.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n := op.writes.count()
		time.Sleep(10 * time.Second)
		if op.writes.count() == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("operator never settled; recent writes: %v", lastN(op.writes.since(0), 20))
		}
	}
	n := op.writes.count()
	// Bounded, as "writes nothing" has no event to wait on: 65 s spans the operator's resync (20 s here) and
	// library-go's one-minute workload resync, each of which would show a write that is not idempotent.
	time.Sleep(65 * time.Second)
	if w := op.writes.since(n); len(w) > 0 {
		t.Fatalf("steady state: %d writes over 65 s (resync %s), want 0: %v", len(w), resync, w)
	}
}

func lastN(s []string, n int) []string { return s[max(0, len(s)-n):] }

// checkInstalledObjects checks the fields operator-inventory §2 and §3 list.
func (e *env) checkInstalledObjects(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	var d *appsv1.Deployment
	eventually(t, time.Minute, "controller Deployment with tags and proxy", func(ctx context.Context) error {
		var err error
		d, err = e.kube.AppsV1().Deployments(namespace).Get(ctx, "aws-efs-csi-driver-controller", metav1.GetOptions{})
		if err != nil {
			return err
		}
		drv := findContainer(d.Spec.Template.Spec.Containers, "csi-driver")
		if !slices.Contains(drv.Args, "--tags=team:storage kubernetes.io/cluster/"+infraName+":owned") {
			return fmt.Errorf("driver args %v", drv.Args)
		}
		if envValue(drv.Env, "HTTPS_PROXY") != "http://proxy.e2e:3128" {
			return fmt.Errorf("driver env %v, want HTTPS_PROXY from the cluster proxy", drv.Env)
		}
		return nil
	})
	spec := d.Spec.Template.Spec
	if !spec.HostNetwork || *d.Spec.Replicas != 2 || spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("Deployment hostNetwork %v replicas %d priority %q", spec.HostNetwork, *d.Spec.Replicas, spec.PriorityClassName)
	}
	prov := findContainer(spec.Containers, "csi-provisioner")
	for _, a := range []string{"--feature-gates=Topology=true", "--extra-create-metadata=true", "--timeout=5m", "--worker-threads=10",
		"--leader-election-lease-duration=137s", "--leader-election-namespace=" + namespace, "--v=2"} {
		if !slices.Contains(prov.Args, a) {
			t.Errorf("provisioner args %v lack %s", prov.Args, a)
		}
	}
	proxy := findContainer(spec.Containers, "provisioner-kube-rbac-proxy")
	if len(proxy.Ports) != 1 || proxy.Ports[0].ContainerPort != 9212 || strings.Contains(strings.Join(proxy.Args, " "), "${") {
		t.Errorf("kube-rbac-proxy ports %v args %v", proxy.Ports, proxy.Args)
	}
	drv := findContainer(spec.Containers, "csi-driver")
	if drv.Image != "quay.io/e2e/aws-efs-csi-driver:v2" || drv.LivenessProbe == nil || envValue(drv.Env, "FIPS_ENABLED") != "false" {
		t.Errorf("driver image %q liveness %v FIPS %q", drv.Image, drv.LivenessProbe, envValue(drv.Env, "FIPS_ENABLED"))
	}
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Image != "quay.io/e2e/tools:v2" {
		t.Errorf("init containers %v", spec.InitContainers)
	}

	ds := ok(e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{}))(t)
	ns := ds.Spec.Template.Spec
	if !ns.HostNetwork || ns.DNSPolicy != corev1.DNSDefault || ns.PriorityClassName != "system-node-critical" {
		t.Errorf("DaemonSet hostNetwork %v dnsPolicy %q priority %q", ns.HostNetwork, ns.DNSPolicy, ns.PriorityClassName)
	}
	hostPaths := map[string]bool{}
	for _, v := range ns.Volumes {
		if v.HostPath != nil {
			hostPaths[v.HostPath.Path] = true
		}
	}
	for _, p := range []string{"/var/lib/kubelet", "/var/lib/kubelet/plugins/efs.csi.aws.com/", "/var/lib/kubelet/plugins_registry/", "/var/run/efs", "/var/amazon/efs", "/etc/amazon/efs"} {
		if !hostPaths[p] {
			t.Errorf("DaemonSet has no hostPath %s", p)
		}
	}
	if reg := findContainer(ns.Containers, "csi-node-driver-registrar"); reg.Image != "quay.io/e2e/csi-node-driver-registrar:v2" {
		t.Errorf("registrar image %q", reg.Image)
	}
	if envValue(findContainer(ns.Containers, "csi-driver").Env, "HTTPS_PROXY") != "" {
		t.Error("node driver has proxy env; want none")
	}

	csi := ok(e.kube.StorageV1().CSIDrivers().Get(ctx, "efs.csi.aws.com", metav1.GetOptions{}))(t)
	if *csi.Spec.AttachRequired || *csi.Spec.PodInfoOnMount || len(csi.Spec.VolumeLifecycleModes) != 1 || csi.Spec.VolumeLifecycleModes[0] != "Persistent" {
		t.Errorf("CSIDriver spec %+v", csi.Spec)
	}
	svc := ok(e.kube.CoreV1().Services(namespace).Get(ctx, "aws-efs-csi-driver-controller-metrics", metav1.GetOptions{}))(t)
	if svc.Annotations["service.beta.openshift.io/serving-cert-secret-name"] != "aws-efs-csi-driver-controller-metrics-serving-cert" || svc.Spec.Ports[0].Port != 9212 {
		t.Errorf("metrics Service %v %v", svc.Annotations, svc.Spec.Ports)
	}
	pdb := ok(e.kube.PolicyV1().PodDisruptionBudgets(namespace).Get(ctx, "aws-efs-csi-driver-controller-pdb", metav1.GetOptions{}))(t)
	if pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != "AlwaysAllow" {
		t.Errorf("PDB %+v", pdb.Spec)
	}
	cm := ok(e.kube.CoreV1().ConfigMaps(namespace).Get(ctx, "aws-efs-csi-driver-trusted-ca-bundle", metav1.GetOptions{}))(t)
	if cm.Labels["config.openshift.io/inject-trusted-cabundle"] != "true" {
		t.Errorf("CA bundle ConfigMap labels %v", cm.Labels)
	}
	sm := ok(e.dyn.Resource(serviceMonitorGVR).Namespace(namespace).Get(ctx, "aws-efs-csi-driver-controller-monitor", metav1.GetOptions{}))(t)
	if eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints"); len(eps) != 1 ||
		eps[0].(map[string]any)["tlsConfig"].(map[string]any)["serverName"] != "aws-efs-csi-driver-controller-metrics."+namespace+".svc" {
		t.Errorf("ServiceMonitor endpoints %v", eps)
	}

	// Mint mode: both CredentialsRequests, secrets in the driver namespace, not in STS form.
	eventually(t, time.Minute, "both CredentialsRequests", func(ctx context.Context) error {
		for name, secret := range map[string]string{"openshift-aws-efs-csi-driver": "aws-efs-cloud-credentials", "openshift-aws-efs-csi-driver-node": "node-aws-efs-cloud-credentials"} {
			cr, err := e.credentialsRequest(ctx, name)
			if err != nil || cr == nil {
				return fmt.Errorf("CredentialsRequest %s: %v", name, err)
			}
			if ns, _, _ := unstructured.NestedString(cr.Object, "spec", "secretRef", "namespace"); ns != namespace {
				return fmt.Errorf("%s secretRef.namespace %q", name, ns)
			}
			if n, _, _ := unstructured.NestedString(cr.Object, "spec", "secretRef", "name"); n != secret {
				return fmt.Errorf("%s secretRef.name %q", name, n)
			}
			if arn, _, _ := unstructured.NestedString(cr.Object, "spec", "providerSpec", "stsIAMRoleARN"); arn != "" {
				return fmt.Errorf("%s has stsIAMRoleARN %q in mint mode", name, arn)
			}
		}
		return nil
	})

	// Conditions per controller, finalizers and generations on the ClusterCSIDriver.
	eventually(t, time.Minute, "conditions on the ClusterCSIDriver", func(ctx context.Context) error {
		for _, c := range []string{
			"AWSEFSDriverControllerServiceControllerAvailable", "AWSEFSDriverControllerServiceControllerProgressing",
			"AWSEFSDriverNodeServiceControllerAvailable", "AWSEFSDriverNodeServiceControllerProgressing",
			"AWSEFSCredentialsRequestControllerAvailable", "AWSEFSNodeCredentialsRequestControllerProgressing",
			"AWSEFSDriverStaticResourcesControllerDegraded", "ManagementStateDegraded",
		} {
			if _, err := e.condition(ctx, c); err != nil {
				return err
			}
		}
		// Nothing schedules pods here, so the workloads are not available, and the message says why.
		c, _ := e.condition(ctx, "AWSEFSDriverNodeServiceControllerAvailable")
		if c.Status != opv1.ConditionFalse || !strings.Contains(c.Message, "Waiting for the DaemonSet") {
			return fmt.Errorf("node Available = %s %q", c.Status, c.Message)
		}
		c, _ = e.condition(ctx, "AWSEFSCredentialsRequestControllerAvailable")
		if c.Status != opv1.ConditionFalse || c.Reason != "CredentialsNotProvisionedYet" {
			return fmt.Errorf("credentials Available = %s %s", c.Status, c.Reason)
		}
		return nil
	})
	// Each controller adds its finalizer from its own sync; under load a sync that lost an update conflict to
	// another controller adds it on its retry, so wait for all of them rather than sample once.
	eventually(t, time.Minute, "finalizers and generations on the ClusterCSIDriver", func(ctx context.Context) error {
		cr, err := e.ops.OperatorV1().ClusterCSIDrivers().Get(ctx, crName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, f := range []string{"AWSEFSDriverControllerServiceController", "AWSEFSDriverNodeServiceController", "AWSEFSDriverUninstallController"} {
			if !slices.Contains(cr.Finalizers, "aws-efs-csi-driver-operator.operator.openshift.io/"+f) {
				return fmt.Errorf("finalizers %v lack %s", cr.Finalizers, f)
			}
		}
		if len(cr.Status.Generations) < 2 {
			return fmt.Errorf("status.generations %v, want the Deployment and DaemonSet", cr.Status.Generations)
		}
		return nil
	})
}

func findContainer(cs []corev1.Container, name string) corev1.Container {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return corev1.Container{}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
