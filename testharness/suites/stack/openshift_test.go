//go:build cluster

package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

const (
	// namespace is where OLM installs the operator and the operator the driver (the CSV's suggested namespace).
	namespace    = "openshift-cluster-csi-drivers"
	ccoNamespace = "openshift-cloud-credential-operator"
	region       = "us-east-1"
	zone         = "us-east-1a"
	instanceID   = "i-0e2e5eac0000000a1"
	// Annotations and labels of the OpenShift components the suite stands in for.
	servingCertAnnotation = "service.beta.openshift.io/serving-cert-secret-name"
	trustedCALabel        = "config.openshift.io/inject-trusted-cabundle"
)

var credentialsRequestGVR = schema.GroupVersionResource{Group: "cloudcredential.openshift.io", Version: "v1", Resource: "credentialsrequests"}

// platform is what an OpenShift cluster on AWS gives the operator: the CRDs, the cluster configuration, the
// provisioner ClusterRole cluster-storage-operator ships, and what service-ca, the cluster network operator and
// the cloud-credential operator do for it.
type platform struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
	conf configclient.Interface
	ops  operatorclient.Interface
	ca   *cluster.CA
	// awsURL is the AWS endpoint of every service (serviceEndpoints); empty leaves AWS's own.
	awsURL string
	// trustedCA is the PEM bundle the cluster network operator injects.
	trustedCA []byte
}

// install creates the OpenShift CRDs and the cluster-scoped configuration of an AWS cluster.
func (p *platform) install(ctx context.Context, control *cluster.Cluster) error {
	docs, err := cluster.OpenShiftCRDs(ctx)
	if err != nil {
		return err
	}
	if err := control.InstallCRDs(ctx, docs...); err != nil {
		return err
	}
	if _, err := p.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ccoNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	infra, err := p.conf.ConfigV1().Infrastructures().Create(ctx, &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       configv1.InfrastructureSpec{PlatformSpec: configv1.PlatformSpec{Type: configv1.AWSPlatformType}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	aws := &configv1.AWSPlatformStatus{Region: region}
	if p.awsURL != "" {
		for _, name := range []string{"elasticfilesystem", "ec2", "sts"} {
			aws.ServiceEndpoints = append(aws.ServiceEndpoints, configv1.AWSServiceEndpoint{Name: name, URL: p.awsURL})
		}
	}
	infra.Status = configv1.InfrastructureStatus{
		InfrastructureName: "stack-e2e", Platform: configv1.AWSPlatformType,
		ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.SingleReplicaTopologyMode,
		APIServerURL: "https://api.stack.example.com:6443", APIServerInternalURL: "https://api-int.stack.example.com:6443",
		PlatformStatus: &configv1.PlatformStatus{Type: configv1.AWSPlatformType, AWS: aws},
	}
	if _, err := p.conf.ConfigV1().Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if _, err := p.conf.ConfigV1().Proxies().Create(ctx, &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := p.conf.ConfigV1().APIServers().Create(ctx, &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := p.ops.OperatorV1().CloudCredentials().Create(ctx, &opv1.CloudCredential{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: opv1.CloudCredentialSpec{OperatorSpec: opv1.OperatorSpec{ManagementState: opv1.Managed}, CredentialsMode: opv1.CloudCredentialsModeDefault}},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	role, err := mainProvisionerRole(ctx)
	if err != nil {
		return err
	}
	_, err = p.kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	return err
}

// mainProvisionerRole is the ClusterRole openshift-csi-main-provisioner-role that cluster-storage-operator ships
// and the driver's controller is bound to: here the rules csi-provisioner documents for itself
// (deploy/kubernetes/rbac.yaml of the version the cluster runs, read from the module cache).
func mainProvisionerRole(ctx context.Context) (*rbacv1.ClusterRole, error) {
	var provisioner cluster.Tool
	for _, t := range localcluster.Sidecars {
		if t.Name == "csi-provisioner" {
			provisioner = t
		}
	}
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", provisioner.Module+"@"+provisioner.Version).Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %w", provisioner.Module, provisioner.Version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, err
	}
	path := filepath.Join(mod.Dir, "deploy", "kubernetes", "rbac.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); err != nil {
			return nil, fmt.Errorf("%s: no ClusterRole external-provisioner-runner: %w", path, err)
		}
		if role.Kind == "ClusterRole" && role.Name == "external-provisioner-runner" {
			return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "openshift-csi-main-provisioner-role"}, Rules: role.Rules}, nil
		}
	}
}

// run does, every second until ctx ends, what three OpenShift components would do for the operator: service-ca
// issues the serving certificate a Service asks for, the cluster network operator fills ConfigMaps labelled for
// the trusted CA bundle, and the cloud-credential operator writes the Secret of each CredentialsRequest (static
// keys, which fakeaws accepts) and marks it provisioned. Errors go to report; the loop goes on.
func (p *platform) run(ctx context.Context, report func(error)) {
	for {
		for _, err := range []error{p.issueServingCerts(ctx), p.injectTrustedCA(ctx), p.writeCredentials(ctx)} {
			if err != nil && ctx.Err() == nil {
				report(err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (p *platform) issueServingCerts(ctx context.Context) error {
	svcs, err := p.kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, svc := range svcs.Items {
		name := svc.Annotations[servingCertAnnotation]
		if name == "" {
			continue
		}
		if _, err := p.kube.CoreV1().Secrets(svc.Namespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			continue
		}
		pair, err := p.ca.ServingCert(svc.Name+"."+svc.Namespace+".svc", svc.Name+"."+svc.Namespace+".svc.cluster.local")
		if err != nil {
			return err
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: svc.Namespace}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: pair.Cert, corev1.TLSPrivateKeyKey: pair.Key}}
		if _, err := p.kube.CoreV1().Secrets(svc.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("service-ca stand-in: %w", err)
		}
	}
	return nil
}

func (p *platform) injectTrustedCA(ctx context.Context) error {
	cms, err := p.kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: trustedCALabel + "=true"})
	if err != nil {
		return err
	}
	for _, cm := range cms.Items {
		if cm.Data["ca-bundle.crt"] == string(p.trustedCA) {
			continue
		}
		cm := cm.DeepCopy()
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["ca-bundle.crt"] = string(p.trustedCA)
		if _, err := p.kube.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("cluster network operator stand-in: %w", err)
		}
	}
	return nil
}

func (p *platform) writeCredentials(ctx context.Context) error {
	crs, err := p.dyn.Resource(credentialsRequestGVR).Namespace(ccoNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, cr := range crs.Items {
		ref, _, _ := unstructured.NestedStringMap(cr.Object, "spec", "secretRef")
		name, ns := ref["name"], ref["namespace"]
		if name == "" || ns == "" {
			continue
		}
		if _, err := p.kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				StringData: map[string]string{"aws_access_key_id": "AKIASTACKE2E", "aws_secret_access_key": "stack-e2e-secret"}}
			if _, err := p.kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) {
				return fmt.Errorf("cloud-credential operator stand-in: %w", err)
			}
		} else if err != nil {
			return err
		}
		if provisioned, _, _ := unstructured.NestedBool(cr.Object, "status", "provisioned"); provisioned && cr.GetGeneration() == lastSync(&cr) {
			continue
		}
		cr := cr.DeepCopy()
		_ = unstructured.SetNestedField(cr.Object, true, "status", "provisioned")
		_ = unstructured.SetNestedField(cr.Object, cr.GetGeneration(), "status", "lastSyncGeneration")
		if _, err := p.dyn.Resource(credentialsRequestGVR).Namespace(ccoNamespace).UpdateStatus(ctx, cr, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("cloud-credential operator stand-in: %w", err)
		}
	}
	return nil
}

func lastSync(cr *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(cr.Object, "status", "lastSyncGeneration")
	return n
}
