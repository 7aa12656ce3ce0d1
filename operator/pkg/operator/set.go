package operator

import (
	opv1 "github.com/openshift/api/operator/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/csi/csicontrollerset"
	"github.com/openshift/library-go/pkg/operator/management"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	"k8s.io/client-go/informers"

	"github.com/openshift/aws-efs-csi/operator/assets"
	"github.com/openshift/aws-efs-csi/operator/pkg/config"
	"github.com/openshift/aws-efs-csi/operator/pkg/credentials"
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
	legacy          informers.SharedInformerFactory
}

// buildDriverControllers returns library-go's CSI controller set for the driver and the operator's own
// controllers that run beside it.
func buildDriverControllers(in driverInputs) (*csicontrollerset.CSIControllerSet, []factory.Controller, error) {
	ns := in.opts.Config.Namespace
	c := in.clients
	rec := in.opts.Recorder
	resync := in.opts.resync()
	statics, err := assets.DriverStatics()
	if err != nil {
		return nil, nil, err
	}
	// Removed deletes the workloads; deleting the ClusterCSIDriver deletes everything but the CredentialsRequests.
	management.SetOperatorRemovable()

	hookInputs := hooks.Inputs{
		Namespace:                ns,
		FIPSEnabled:              in.opts.Config.FIPSEnabled,
		ClusterCSIDriverName:     ClusterCSIDriverName,
		Kube:                     in.kubeInformers.InformersFor(ns),
		Config:                   in.configInformers,
		ClusterCSIDrivers:        in.opInformers.Operator().V1().ClusterCSIDrivers().Lister(),
		ClusterCSIDriverInformer: in.opInformers.Operator().V1().ClusterCSIDrivers().Informer(),
		LegacyDaemonSets:         in.legacy.Apps().V1().DaemonSets().Lister(),
		LegacyDaemonSetInformer:  in.legacy.Apps().V1().DaemonSets().Informer(),
	}
	deployHooks, deployInformers := hooks.Deployment(hookInputs)
	dsHooks, dsInformers := hooks.DaemonSet(hookInputs)

	shouldCreate := func() bool {
		spec, _, _, err := in.operatorClient.GetOperatorState()
		if err != nil || spec.ManagementState != opv1.Managed {
			return false
		}
		meta, err := in.operatorClient.GetObjectMeta()
		return err == nil && meta.DeletionTimestamp == nil
	}
	never := func() bool { return false }

	set := csicontrollerset.NewCSIControllerSet(in.operatorClient, rec).
		WithLogLevelController().
		WithManagementStateController("AWSEFSCSIDriver", true).
		WithConditionalStaticResourcesController(StaticResourcesController, c.kube, c.dynamic, in.kubeInformers,
			in.assetFunc, statics, shouldCreate, never).
		WithCSIConfigObserverController(ConfigObserverController, in.configInformers).
		WithCSIDriverControllerService(ControllerServiceController, in.assetFunc, assets.ControllerDeployment, c.kube,
			in.kubeInformers.InformersFor(ns), in.configInformers, deployInformers, deployHooks...).
		WithCSIDriverNodeService(NodeServiceController, in.assetFunc, assets.NodeDaemonSet, c.kube,
			in.kubeInformers.InformersFor(ns), dsInformers, dsHooks...)

	cloudCreds := in.opInformers.Operator().V1().CloudCredentials()
	var extra []factory.Controller
	for _, cr := range []struct {
		name, asset, env, arn string
	}{
		{CredentialsRequestController, assets.CredentialsRequest, config.EnvRoleARN, in.opts.Config.RoleARN},
		{NodeCredentialsRequestController, assets.NodeCredentialsRequest, config.EnvNodeRoleARN, in.opts.Config.NodeRoleARN},
	} {
		manifest, err := in.assetFunc(cr.asset)
		if err != nil {
			return nil, nil, err
		}
		extra = append(extra, credentials.New(credentials.Options{
			Name: cr.name, Manifest: manifest, TargetNamespace: ns, RoleARNEnv: cr.env, RoleARN: cr.arn, ResyncInterval: resync,
		}, in.operatorClient, c.dynamic, cloudCreds.Lister(), cloudCreds.Informer(), rec))
	}
	extra = append(extra,
		takeover.New(in.operatorClient, c.kube, in.legacy.Apps().V1().DaemonSets().Lister(),
			in.legacy.Apps().V1().DaemonSets().Informer(), resync, rec),
		newUninstaller(&uninstaller{
			operatorClient: in.operatorClient,
			clients:        (&resourceapply.ClientHolder{}).WithKubernetes(c.kube).WithDynamicClient(c.dynamic),
			assets:         in.assetFunc,
			files:          statics,
		}, resync, rec),
	)
	return set, extra, nil
}
