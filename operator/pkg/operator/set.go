package operator

import (
	"os"
	"slices"

	opv1 "github.com/openshift/api/operator/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/csi/csiconfigobservercontroller"
	"github.com/openshift/library-go/pkg/operator/csi/csidrivercontrollerservicecontroller"
	"github.com/openshift/library-go/pkg/operator/csi/csidrivernodeservicecontroller"
	dc "github.com/openshift/library-go/pkg/operator/deploymentcontroller"
	"github.com/openshift/library-go/pkg/operator/loglevel"
	"github.com/openshift/library-go/pkg/operator/managementstatecontroller"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/staticresourcecontroller"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	"k8s.io/client-go/informers"

	"github.com/openshift/aws-efs-csi/operator/assets"
	"github.com/openshift/aws-efs-csi/operator/pkg/adoption"
	"github.com/openshift/aws-efs-csi/operator/pkg/aptags"
	"github.com/openshift/aws-efs-csi/operator/pkg/config"
	"github.com/openshift/aws-efs-csi/operator/pkg/credentials"
	"github.com/openshift/aws-efs-csi/operator/pkg/csidriver"
	"github.com/openshift/aws-efs-csi/operator/pkg/hooks"
	"github.com/openshift/aws-efs-csi/operator/pkg/takeover"
)

type driverInputs struct {
	opts            Options
	clients         *clients
	assetFunc       resourceapply.AssetFunc
	operatorClient  v1helpers.OperatorClientWithFinalizers
	kubeInformers   v1helpers.KubeInformersForNamespaces
	configInformers configinformers.SharedInformerFactory
	opInformers     operatorinformers.SharedInformerFactory
	// communityDaemonSets and communityDeployments watch the community aws-efs-operator's node DaemonSet and its
	// own Deployment in every namespace (by name; the DaemonSet also by its ownership label).
	communityDaemonSets  informers.SharedInformerFactory
	communityDeployments informers.SharedInformerFactory
	// communityPods watches the pods of efs-csi-node DaemonSets in every namespace (by label), which must be gone
	// before the driver's node DaemonSet starts.
	communityPods informers.SharedInformerFactory
}

// buildDriverControllers returns library-go's CSI controllers for the driver and the operator's own controllers
// that run beside them.
func buildDriverControllers(in driverInputs) ([]factory.Controller, error) {
	ns := in.opts.Config.Namespace
	c := in.clients
	rec := in.opts.Recorder
	resync := in.opts.resync()
	statics, err := assets.DriverStatics()
	if err != nil {
		return nil, err
	}
	csiDriverManifest, err := in.assetFunc(assets.CSIDriver)
	if err != nil {
		return nil, err
	}
	csiDriver, err := csidriver.Read(csiDriverManifest)
	if err != nil {
		return nil, err
	}
	rendered := map[string][]byte{}
	for _, f := range statics {
		if rendered[f], err = in.assetFunc(f); err != nil {
			return nil, err
		}
	}
	rbac, err := hooks.ReadRBAC(rendered)
	if err != nil {
		return nil, err
	}
	// The CSIDriver has a controller of its own (adoption in place); the uninstaller deletes it with the rest.
	applied := slices.DeleteFunc(slices.Clone(statics), func(f string) bool { return f == assets.CSIDriver })

	hookInputs := hooks.Inputs{
		Namespace:                  ns,
		FIPSEnabled:                in.opts.Config.FIPSEnabled,
		ClusterCSIDriverName:       ClusterCSIDriverName,
		Kube:                       in.kubeInformers.InformersFor(ns),
		ClusterKube:                in.kubeInformers.InformersFor(""),
		RBAC:                       rbac,
		Config:                     in.configInformers,
		ClusterCSIDrivers:          in.opInformers.Operator().V1().ClusterCSIDrivers().Lister(),
		ClusterCSIDriverInformer:   in.opInformers.Operator().V1().ClusterCSIDrivers().Informer(),
		CommunityDaemonSets:        in.communityDaemonSets.Apps().V1().DaemonSets().Lister(),
		CommunityDaemonSetInformer: in.communityDaemonSets.Apps().V1().DaemonSets().Informer(),
		CommunityPods:              in.communityPods.Core().V1().Pods().Lister(),
		CommunityPodInformer:       in.communityPods.Core().V1().Pods().Informer(),
	}
	deployHooks, deployInformers := hooks.Deployment(hookInputs)
	dsHooks, dsInformers := hooks.DaemonSet(hookInputs)

	controllers, err := libraryGoControllers(in, applied, deployHooks, deployInformers, dsHooks, dsInformers)
	if err != nil {
		return nil, err
	}

	cloudCreds := in.opInformers.Operator().V1().CloudCredentials()
	for _, cr := range []struct {
		name, alias, asset, env, arn string
	}{
		{CredentialsRequestController, LegacyCredentialsRequestController, assets.CredentialsRequest, config.EnvRoleARN, in.opts.Config.RoleARN},
		{NodeCredentialsRequestController, "", assets.NodeCredentialsRequest, config.EnvNodeRoleARN, in.opts.Config.NodeRoleARN},
	} {
		manifest, err := in.assetFunc(cr.asset)
		if err != nil {
			return nil, err
		}
		controllers = append(controllers, credentials.New(credentials.Options{
			Name: cr.name, AliasName: cr.alias, Manifest: manifest, TargetNamespace: ns, RoleARNEnv: cr.env, RoleARN: cr.arn, ResyncInterval: resync,
		}, in.operatorClient, c.dynamic, cloudCreds.Lister(), cloudCreds.Informer(), rec))
	}
	csiDrivers := in.kubeInformers.InformersFor("").Storage().V1().CSIDrivers()
	pvs, secrets := in.kubeInformers.InformersFor("").Core().V1().PersistentVolumes(), in.kubeInformers.InformersFor(ns).Core().V1().Secrets()
	infras := in.configInformers.Config().V1().Infrastructures()
	clusterRBAC := in.kubeInformers.InformersFor("").Rbac().V1()
	controllers = append(controllers,
		csidriver.New(in.operatorClient, csidriver.Inputs{Required: csiDriver, Kube: c.kube,
			CSIDrivers: csiDrivers.Lister(), Informer: csiDrivers.Informer()}, resync, rec),
		takeover.New(in.operatorClient, c.kube, takeover.Inputs{
			DaemonSets:          in.communityDaemonSets.Apps().V1().DaemonSets().Lister(),
			DaemonSetsInformer:  in.communityDaemonSets.Apps().V1().DaemonSets().Informer(),
			Deployments:         in.communityDeployments.Apps().V1().Deployments().Lister(),
			DeploymentsInformer: in.communityDeployments.Apps().V1().Deployments().Informer(),
		}, resync, rec),
		aptags.New(aptags.Inputs{
			OperatorClient: in.operatorClient, Kube: c.kube,
			Infrastructures: infras.Lister(), InfrastructureInformer: infras.Informer(),
			PVs: pvs.Lister(), PVInformer: pvs.Informer(), Secrets: secrets.Lister(), SecretInformer: secrets.Informer(),
			Namespace: ns, WebIdentityTokenFile: in.opts.Config.WebIdentityTokenFile,
		}, rec),
		adoption.New(adoption.Inputs{
			OperatorClient: in.operatorClient,
			OwnFinalizers:  finalizerNames(ControllerServiceController, NodeServiceController, UninstallController),
			OwnCondition:   StaticResourcesController + "Degraded",
			LegacyRBAC: adoption.LegacyRBAC{Kube: c.kube, Bindings: clusterRBAC.ClusterRoleBindings().Lister(), Roles: clusterRBAC.ClusterRoles().Lister(),
				Namespace: ns, ServiceAccount: ControllerServiceAccount},
			RBACInformers: []factory.Informer{clusterRBAC.ClusterRoleBindings().Informer(), clusterRBAC.ClusterRoles().Informer()},
		}, resync, rec),
		newUninstaller(&uninstaller{
			operatorClient:  in.operatorClient,
			clients:         (&resourceapply.ClientHolder{}).WithKubernetes(c.kube).WithDynamicClient(c.dynamic),
			assets:          in.assetFunc,
			files:           statics,
			pods:            in.kubeInformers.InformersFor(ns).Core().V1().Pods(),
			namespace:       ns,
			serviceAccounts: rbac.ServiceAccountNames(),
		}, resync, rec),
	)
	return controllers, nil
}

// libraryGoControllers returns library-go's CSI controllers for the driver (log level, management state, static
// resources, config observer, controller Deployment, node DaemonSet), built as csicontrollerset builds them but
// returned to the caller, which runs them and waits for them to stop.
func libraryGoControllers(in driverInputs, statics []string, deployHooks []dc.DeploymentHookFunc, deployInformers []factory.Informer,
	dsHooks []csidrivernodeservicecontroller.DaemonSetHookFunc, dsInformers []factory.Informer) ([]factory.Controller, error) {
	ns := in.opts.Config.Namespace
	c, rec := in.clients, in.opts.Recorder
	shouldCreate := func() bool {
		spec, _, _, err := in.operatorClient.GetOperatorState()
		if err != nil || spec.ManagementState != opv1.Managed {
			return false
		}
		meta, err := in.operatorClient.GetObjectMeta()
		return err == nil && meta.DeletionTimestamp == nil
	}
	never := func() bool { return false }
	deployment, err := in.assetFunc(assets.ControllerDeployment)
	if err != nil {
		return nil, err
	}
	daemonSet, err := in.assetFunc(assets.NodeDaemonSet)
	if err != nil {
		return nil, err
	}
	nsInformers := in.kubeInformers.InformersFor(ns)
	return []factory.Controller{
		loglevel.NewClusterOperatorLoggingController(in.operatorClient, rec),
		managementstatecontroller.NewOperatorManagementStateController("AWSEFSCSIDriver", in.operatorClient, rec),
		staticresourcecontroller.NewStaticResourceController(StaticResourcesController, in.assetFunc, []string{},
			(&resourceapply.ClientHolder{}).WithKubernetes(c.kube).WithDynamicClient(c.dynamic), in.operatorClient, rec).
			WithConditionalResources(in.assetFunc, statics, shouldCreate, never).
			AddKubeInformers(in.kubeInformers),
		csiconfigobservercontroller.NewCSIConfigObserverController(ConfigObserverController, in.operatorClient, in.configInformers, rec),
		csidrivercontrollerservicecontroller.NewCSIDriverControllerServiceController(ControllerServiceController, deployment, rec,
			in.operatorClient, c.kube, nsInformers.Apps().V1().Deployments(), in.configInformers, deployInformers, deployHooks...),
		csidrivernodeservicecontroller.NewCSIDriverNodeServiceController(NodeServiceController, daemonSet, rec,
			in.operatorClient, c.kube, nsInformers.Apps().V1().DaemonSets(), dsInformers, dsHooks...),
	}, nil
}

// finalizerNames returns the full names of the finalizers that controllers put on the ClusterCSIDriver, named as
// library-go's v1helpers.EnsureFinalizer names them: <OPERATOR_NAME, else the program>.operator.openshift.io/<controller>.
func finalizerNames(controllers ...string) []string {
	operator := os.Getenv("OPERATOR_NAME")
	if operator == "" {
		operator = os.Args[0]
	}
	var out []string
	for _, c := range controllers {
		out = append(out, operator+".operator.openshift.io/"+c)
	}
	return out
}
