package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

const nodeSA = "aws-efs-csi-driver-node-sa"

// TestNodeDriverWithShippedRBAC runs the driver binary in node mode exactly as the operator's node DaemonSet
// configures it (arguments, environment) with the node ServiceAccount's token, against the real kube-apiserver
// with the RBAC the operator applied, and counts the requests the API server logged for that ServiceAccount.
func TestNodeDriverWithShippedRBAC(t *testing.T) {
	e := newEnv(t)
	e.startOperator(testConfig())
	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, 2*time.Minute, "every driver object", e.driverObjectsExist)
	eventually(t, time.Minute, "the node ServiceAccount's RBAC", func(ctx context.Context) error {
		_, err := e.kube.RbacV1().ClusterRoleBindings().Get(ctx, "efs-node-reader-binding", metav1.GetOptions{})
		return err
	})
	awsURL := startFakeAWS(t)

	// Infrastructure.status.platformStatus.aws.serviceEndpoints reach the driver container of both workloads (and
	// so mount.efs and botocore, which the node driver runs), and go again when removed.
	t.Run("custom AWS endpoints", func(t *testing.T) {
		want := map[string]string{"AWS_ENDPOINT_URL_EFS": "https://efs.private.example:8443", "AWS_ENDPOINT_URL_EC2": "https://ec2.private.example",
			"AWS_ENDPOINT_URL_STS": "https://sts.private.example"}
		e.setServiceEndpoints(t, []configv1.AWSServiceEndpoint{{Name: "elasticfilesystem", URL: want["AWS_ENDPOINT_URL_EFS"]},
			{Name: "ec2", URL: want["AWS_ENDPOINT_URL_EC2"]}, {Name: "sts", URL: want["AWS_ENDPOINT_URL_STS"]}, {Name: "s3", URL: "https://s3.private.example"}})
		eventually(t, 2*time.Minute, "endpoints in both workloads", func(ctx context.Context) error { return e.workloadEndpoints(ctx, want) })
		e.setServiceEndpoints(t, nil)
		eventually(t, 2*time.Minute, "endpoints gone from both workloads", func(ctx context.Context) error { return e.workloadEndpoints(ctx, nil) })
	})
	identified := regexp.MustCompile(`"Node identified".*source="(imds|kubernetes)"`)

	// On AWS instance metadata answers: the node needs nothing from the API server, and asks nothing (OpenShift
	// puts no start-up taint on nodes, so the driver does not look for one).
	t.Run("instance metadata reachable", func(t *testing.T) {
		e.testNode(t, "worker-imds")
		d := e.runNodeDriver(t, nodeDriver{node: "worker-imds", imds: awsURL})
		waitForOutput(t, d, time.Minute, identified)
		time.Sleep(5 * time.Second)
		if reqs := e.requestsFor(t, "worker-imds"); len(reqs) != 0 {
			t.Fatalf("node driver made %d requests, want none: %v", len(reqs), reqs)
		}
		if !strings.Contains(d.output(), `source="imds"`) {
			t.Fatal("node not identified from instance metadata")
		}
	})

	// Without instance metadata the node reads its own Node once, and RBAC allows it.
	t.Run("instance metadata unreachable", func(t *testing.T) {
		e.testNode(t, "worker-no-imds")
		d := e.runNodeDriver(t, nodeDriver{node: "worker-no-imds"})
		waitForOutput(t, d, time.Minute, identified)
		time.Sleep(5 * time.Second)
		reqs := e.requestsFor(t, "worker-no-imds")
		if len(reqs) != 1 || reqs[0].Verb != "get" || reqs[0].Code() != 200 {
			t.Fatalf("node driver requests %v, want one allowed get of its Node", reqs)
		}
		if !strings.Contains(d.output(), `source="kubernetes"`) || !strings.Contains(d.output(), "i-0a1b2c3d4e5f60718") {
			t.Fatal("node not identified from its Node object")
		}
	})

	// With the taint remover turned back on (an upstream-style install on a tainted node) and the shipped RBAC
	// (get only), the driver tries the patch once, is refused, says which permission is missing, and stops.
	t.Run("taint remover stops on Forbidden", func(t *testing.T) {
		e.testNode(t, "worker-tainted", corev1.Taint{Key: "efs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute})
		d := e.runNodeDriver(t, nodeDriver{node: "worker-tainted", imds: awsURL, env: map[string]string{"DISABLE_TAINT_WATCHER": "-"}})
		stopped := regexp.MustCompile(`Start-up taint removal stopped: permission missing`)
		waitForOutput(t, d, time.Minute, stopped)
		time.Sleep(5 * time.Second)
		var gets, patches, denied int
		reqs := e.requestsFor(t, "worker-tainted")
		for _, r := range reqs {
			switch r.Verb {
			case "get":
				gets++
			case "patch":
				patches++
			}
			if r.Code() == 403 {
				denied++
			}
		}
		if gets != 1 || patches != 1 || denied != 1 {
			t.Fatalf("requests %v: want one get, one denied patch and nothing after", reqs)
		}
		out := d.output()
		if n := len(stopped.FindAllString(out, -1)); n != 1 {
			t.Fatalf("the missing permission was logged %d times, want once", n)
		}
		if !strings.Contains(out, `missingPermission="patch nodes"`) {
			t.Fatalf("the log does not name the missing permission:\n%s", out)
		}
		n := ok(e.kube.CoreV1().Nodes().Get(t.Context(), "worker-tainted", metav1.GetOptions{}))(t)
		if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == "efs.csi.aws.com/agent-not-ready" }) {
			t.Fatalf("taints %v changed without permission", n.Spec.Taints)
		}
	})

	// Nothing the node ServiceAccount asked for was denied.
	for _, r := range e.serviceAccountRequests(t, nodeSA) {
		if r.Code() == 403 && (r.ObjectRef == nil || r.ObjectRef.Name != "worker-tainted") {
			t.Errorf("denied: %v", r)
		}
	}
}

// setServiceEndpoints replaces the Infrastructure's custom AWS endpoints.
func (e *env) setServiceEndpoints(t *testing.T, eps []configv1.AWSServiceEndpoint) {
	t.Helper()
	infra := ok(e.conf.ConfigV1().Infrastructures().Get(t.Context(), "cluster", metav1.GetOptions{}))(t)
	infra.Status.PlatformStatus.AWS.ServiceEndpoints = eps
	ok(e.conf.ConfigV1().Infrastructures().UpdateStatus(t.Context(), infra, metav1.UpdateOptions{}))(t)
}

// workloadEndpoints checks that the driver container of the controller Deployment and of the node DaemonSet has
// exactly the AWS_ENDPOINT_URL_* variables in want.
func (e *env) workloadEndpoints(ctx context.Context, want map[string]string) error {
	d, err := e.kube.AppsV1().Deployments(namespace).Get(ctx, "aws-efs-csi-driver-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	ds, err := e.kube.AppsV1().DaemonSets(namespace).Get(ctx, "aws-efs-csi-driver-node", metav1.GetOptions{})
	if err != nil {
		return err
	}
	for what, spec := range map[string]corev1.PodSpec{"Deployment": d.Spec.Template.Spec, "DaemonSet": ds.Spec.Template.Spec} {
		got := map[string]string{}
		for _, ev := range findContainer(spec.Containers, "csi-driver").Env {
			if strings.HasPrefix(ev.Name, "AWS_ENDPOINT_URL") {
				got[ev.Name] = ev.Value
			}
		}
		if len(got) != len(want) {
			return fmt.Errorf("%s driver endpoints %v, want %v", what, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("%s driver endpoints %v, want %v", what, got, want)
			}
		}
	}
	return nil
}

// requestsFor returns the node ServiceAccount's requests about one Node.
func (e *env) requestsFor(t *testing.T, node string) []cluster.AuditEvent {
	t.Helper()
	var out []cluster.AuditEvent
	for _, r := range e.serviceAccountRequests(t, nodeSA) {
		if r.ObjectRef != nil && r.ObjectRef.Resource == "nodes" && r.ObjectRef.Name == node {
			out = append(out, r)
		}
	}
	return out
}
