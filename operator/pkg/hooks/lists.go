package hooks

import (
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorlisters "github.com/openshift/client-go/operator/listers/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/csi/csidrivercontrollerservicecontroller"
	"github.com/openshift/library-go/pkg/operator/csi/csidrivernodeservicecontroller"
	dc "github.com/openshift/library-go/pkg/operator/deploymentcontroller"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/openshift/aws-efs-csi/operator/pkg/takeover"
	"github.com/openshift/aws-efs-csi/operator/pkg/whilemanaged"
)

// Names of the objects the workload hooks read.
const (
	// TrustedCABundleConfigMap is filled by the cluster network operator with the cluster's trusted CA bundle.
	TrustedCABundleConfigMap = "aws-efs-csi-driver-trusted-ca-bundle"
	// ControllerCredentialsSecret is written by the cloud-credential operator (or the admin in manual mode).
	ControllerCredentialsSecret = "aws-efs-cloud-credentials"
	// NodeCredentialsSecret holds the node role's credentials; optional.
	NodeCredentialsSecret = "node-aws-efs-cloud-credentials"
	// MetricsServingCertSecret is the provisioner metrics certificate written by service-ca.
	MetricsServingCertSecret = "aws-efs-csi-driver-controller-metrics-serving-cert"
)

// Inputs are what the hook lists read.
type Inputs struct {
	// Namespace holds the driver's workloads, secrets and ConfigMaps.
	Namespace string
	// FIPSEnabled was read once at start-up.
	FIPSEnabled bool
	// ClusterCSIDriverName is the ClusterCSIDriver the operator serves.
	ClusterCSIDriverName string
	// Kube are informers for Namespace (ConfigMaps, Secrets, ServiceAccounts, Roles, RoleBindings).
	Kube informers.SharedInformerFactory
	// ClusterKube are the cluster-scoped informers (ClusterRoles, ClusterRoleBindings).
	ClusterKube informers.SharedInformerFactory
	// RBAC is what the static manifests give the workloads' ServiceAccounts; each workload waits for its own.
	RBAC *RBAC
	// Config are the cluster configuration informers (Infrastructure, Proxy).
	Config configinformers.SharedInformerFactory
	// ClusterCSIDrivers lists the ClusterCSIDriver (spec.driverConfig).
	ClusterCSIDrivers operatorlisters.ClusterCSIDriverLister
	// ClusterCSIDriverInformer is the informer behind ClusterCSIDrivers.
	ClusterCSIDriverInformer factory.Informer
	// CommunityDaemonSets lists the DaemonSets named efs-csi-node in every namespace (the community
	// aws-efs-operator's carry its ownership label).
	CommunityDaemonSets appslisters.DaemonSetLister
	// CommunityDaemonSetInformer is the informer behind CommunityDaemonSets.
	CommunityDaemonSetInformer factory.Informer
	// CommunityPods lists the pods labelled takeover.PodSelector in every namespace.
	CommunityPods corelisters.PodLister
	// CommunityPodInformer is the informer behind CommunityPods.
	CommunityPodInformer factory.Informer
}

// Deployment returns the hooks for the controller Deployment, in order, and the informers they read. library-go
// runs its own placeholder, TLS, leader-election and control-plane-topology hooks before these.
func Deployment(in Inputs) ([]dc.DeploymentHookFunc, []factory.Informer) {
	cms := in.Kube.Core().V1().ConfigMaps()
	secrets := in.Kube.Core().V1().Secrets()
	hooks := []dc.DeploymentHookFunc{
		whilemanaged.Hook(in.ClusterCSIDrivers, in.ClusterCSIDriverName, RBACInPlace(in.RBAC, in.Namespace, in.Kube, in.ClusterKube, func(d *appsv1.Deployment) *corev1.PodSpec { return &d.Spec.Template.Spec })),
		ProfileWithoutCipherList(),
		csidrivercontrollerservicecontroller.WithObservedProxyDeploymentHook(),
		csidrivercontrollerservicecontroller.WithReplicasHook(in.Config),
		csidrivercontrollerservicecontroller.WithCABundleDeploymentHook(in.Namespace, TrustedCABundleConfigMap, cms),
		FIPSDeployment(in.FIPSEnabled),
		CustomTags(in.Config.Config().V1().Infrastructures().Lister()),
		ServiceEndpoints(in.Config.Config().V1().Infrastructures().Lister(), func(d *appsv1.Deployment) *corev1.PodSpec { return &d.Spec.Template.Spec }),
		csidrivercontrollerservicecontroller.WithSecretHashAnnotationHook(in.Namespace, ControllerCredentialsSecret, secrets),
		csidrivercontrollerservicecontroller.WithSecretHashAnnotationHook(in.Namespace, MetricsServingCertSecret, secrets),
		// Last: it sees the Deployment every other hook made.
		whilemanaged.Hook(in.ClusterCSIDrivers, in.ClusterCSIDriverName, NoPlaceholdersLeft(func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template })),
	}
	informers := append([]factory.Informer{
		cms.Informer(),
		secrets.Informer(),
		in.ClusterCSIDriverInformer,
		in.Config.Config().V1().Infrastructures().Informer(),
		in.Config.Config().V1().Proxies().Informer(),
	}, rbacInformers(in)...)
	return hooks, informers
}

// DaemonSet returns the hooks for the node DaemonSet, in order, and the informers they read. library-go replaces
// the image and log level placeholders before these run.
func DaemonSet(in Inputs) ([]csidrivernodeservicecontroller.DaemonSetHookFunc, []factory.Informer) {
	cms := in.Kube.Core().V1().ConfigMaps()
	secrets := in.Kube.Core().V1().Secrets()
	hooks := []csidrivernodeservicecontroller.DaemonSetHookFunc{
		takeover.HoldBackHook(in.CommunityDaemonSets, in.CommunityPods, in.ClusterCSIDrivers, in.ClusterCSIDriverName),
		whilemanaged.Hook(in.ClusterCSIDrivers, in.ClusterCSIDriverName, RBACInPlace(in.RBAC, in.Namespace, in.Kube, in.ClusterKube, func(ds *appsv1.DaemonSet) *corev1.PodSpec { return &ds.Spec.Template.Spec })),
		csidrivernodeservicecontroller.WithCABundleDaemonSetHook(in.Namespace, TrustedCABundleConfigMap, cms),
		FIPSDaemonSet(in.FIPSEnabled),
		VolumeMetrics(in.ClusterCSIDrivers, in.ClusterCSIDriverName),
		NodeDNSPolicy(),
		ServiceEndpoints(in.Config.Config().V1().Infrastructures().Lister(), func(ds *appsv1.DaemonSet) *corev1.PodSpec { return &ds.Spec.Template.Spec }),
		csidrivernodeservicecontroller.WithSecretHashAnnotationHook(in.Namespace, NodeCredentialsSecret, secrets),
		// Last: it sees the DaemonSet every other hook made.
		whilemanaged.Hook(in.ClusterCSIDrivers, in.ClusterCSIDriverName, NoPlaceholdersLeft(func(ds *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &ds.Spec.Template })),
	}
	informers := append([]factory.Informer{
		cms.Informer(),
		secrets.Informer(),
		in.ClusterCSIDriverInformer,
		in.CommunityDaemonSetInformer,
		in.CommunityPodInformer,
		in.Config.Config().V1().Infrastructures().Informer(),
	}, rbacInformers(in)...)
	return hooks, informers
}

// rbacInformers are the informers behind the listers RBACInPlace reads. They are declared with the workload
// controllers' informers because library-go's factory waits for the caches of the declared informers only before
// the first sync: RBACInPlace reading an unsynced lister would find the RBAC missing and report the controller
// Degraded for a moment on every operator start (every upgrade), although nothing is missing.
func rbacInformers(in Inputs) []factory.Informer {
	return []factory.Informer{
		in.Kube.Core().V1().ServiceAccounts().Informer(),
		in.Kube.Rbac().V1().Roles().Informer(),
		in.Kube.Rbac().V1().RoleBindings().Informer(),
		in.ClusterKube.Rbac().V1().ClusterRoles().Informer(),
		in.ClusterKube.Rbac().V1().ClusterRoleBindings().Informer(),
	}
}
