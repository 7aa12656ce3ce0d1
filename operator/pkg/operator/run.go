package operator

import (
	"context"
	"fmt"
	"sync"

	configclient "github.com/openshift/client-go/config/clientset/versioned"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/management"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/operator/assets"
	"github.com/openshift/aws-efs-csi/operator/pkg/presence"
	"github.com/openshift/aws-efs-csi/operator/pkg/sharedvolume"
	"github.com/openshift/aws-efs-csi/operator/pkg/takeover"
)

// clients are shared by everything the operator runs.
type clients struct {
	kube     kubernetes.Interface
	dynamic  dynamic.Interface
	operator operatorclient.Interface
	config   configclient.Interface
}

// Run runs the operator until ctx ends: the SharedVolume controller and the presence controller always, the
// driver's controllers while the ClusterCSIDriver exists.
func Run(ctx context.Context, opts Options) error {
	if err := opts.Config.Validate(); err != nil {
		return fmt.Errorf("operator configuration: %w", err)
	}
	c, err := newClients(opts)
	if err != nil {
		return err
	}
	// Removed deletes the workloads; deleting the ClusterCSIDriver deletes everything but the CredentialsRequests.
	// library-go keeps this in a process-wide variable that every controller's reconcile reads: set it before any
	// controller starts, and only once (a test process runs the operator many times, and a later write would race
	// with the reads of controllers still running).
	if !management.IsOperatorRemovable() {
		management.SetOperatorRemovable()
	}
	klog.InfoS("Starting the AWS EFS CSI driver operator", "namespace", opts.Config.Namespace, "version", opts.Config.Version,
		"fips", opts.Config.FIPSEnabled, "roleARNSet", opts.Config.RoleARN != "", "nodeRoleARNSet", opts.Config.NodeRoleARN != "")

	values := placeholderValues(opts)
	assetFunc := func(name string) ([]byte, error) { return assets.Render(name, values) }

	drivers := operatorinformers.NewSharedInformerFactoryWithOptions(c.operator, opts.resync(),
		operatorinformers.WithTweakListOptions(byName(ClusterCSIDriverName)))
	driverInformer := drivers.Operator().V1().ClusterCSIDrivers()

	monitoring, err := assets.List("operator")
	if err != nil {
		return err
	}
	presenceCtrl, _ := presence.New(presence.Options{
		Name:            ClusterCSIDriverName,
		Drivers:         driverInformer.Lister(),
		DriversInformer: driverInformer.Informer(),
		Missing:         opts.Missing,
		Start:           func(ctx context.Context) (<-chan struct{}, error) { return startDriverSet(ctx, opts, c, assetFunc) },
		Clients:         (&resourceapply.ClientHolder{}).WithKubernetes(c.kube).WithDynamicClient(c.dynamic),
		Assets:          assetFunc,
		Files:           monitoring,
		Resync:          opts.resync(),
	}, opts.Recorder)

	svCtrl, svInformers := newSharedVolumeController(c, opts)

	drivers.Start(ctx.Done())
	for _, start := range svInformers {
		start(ctx.Done())
	}
	var wg sync.WaitGroup
	for _, ctrl := range []factory.Controller{presenceCtrl, svCtrl} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctrl.Run(ctx, 1)
		}()
	}
	wg.Wait()
	return nil
}

func newClients(opts Options) (*clients, error) {
	cfg := opts.KubeConfig
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	op, err := operatorclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	conf, err := configclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{kube: kube, dynamic: dyn, operator: op, config: conf}, nil
}

// placeholderValues are the placeholders filled once from the start-up configuration.
func placeholderValues(opts Options) map[string]string {
	im := opts.Config.Images
	return map[string]string{
		assets.Namespace:                opts.Config.Namespace,
		assets.DriverImage:              im.Driver,
		assets.ProvisionerImage:         im.Provisioner,
		assets.NodeDriverRegistrarImage: im.NodeDriverRegistrar,
		assets.LivenessProbeImage:       im.LivenessProbe,
		assets.KubeRBACProxyImage:       im.KubeRBACProxy,
		assets.ToolsImage:               im.Tools,
	}
}

func byName(name string) func(*metav1.ListOptions) {
	return func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
}

// newSharedVolumeController returns the SharedVolume controller and the start functions of its informers.
func newSharedVolumeController(c *clients, opts Options) (factory.Controller, []func(<-chan struct{})) {
	svFactory := dynamicinformer.NewDynamicSharedInformerFactory(c.dynamic, opts.resync())
	svInformer := svFactory.ForResource(sharedvolume.GroupVersionResource).Informer()
	owned := informers.NewSharedInformerFactoryWithOptions(c.kube, opts.resync(),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sharedvolume.OwnedSelector().String() }))
	pvs := owned.Core().V1().PersistentVolumes()
	pvcs := owned.Core().V1().PersistentVolumeClaims()

	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.kube.CoreV1().Events("")})
	events := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "aws-efs-csi-driver-operator"})

	grants := informers.NewSharedInformerFactoryWithOptions(c.kube, opts.resync(), informers.WithNamespace(opts.Config.Namespace),
		informers.WithTweakListOptions(byName(sharedvolume.GrantsConfigMap)))
	grantCMs := grants.Core().V1().ConfigMaps()

	ctrl := sharedvolume.New(sharedvolume.Clients{
		Kube: c.kube, Dynamic: c.dynamic,
		SharedVolumes: svInformer,
		PVs:           pvs.Lister(), PVInformer: pvs.Informer(),
		PVCs: pvcs.Lister(), PVCInformer: pvcs.Informer(),
		Events: events,
		Grants: sharedvolume.Grants{Namespace: opts.Config.Namespace, ConfigMaps: grantCMs.Lister()}, GrantsInformer: grantCMs.Informer(),
	}, opts.resync(), opts.Recorder)
	return ctrl, []func(<-chan struct{}){svFactory.Start, owned.Start, grants.Start}
}

// startDriverSet builds fresh informers and controllers for the driver and runs them until ctx ends.
func startDriverSet(ctx context.Context, opts Options, c *clients, assetFunc func(string) ([]byte, error)) (<-chan struct{}, error) {
	ns := opts.Config.Namespace
	resync := opts.resync()
	operatorClient, dynInformers, err := newOperatorClient(opts.KubeConfig)
	if err != nil {
		return nil, fmt.Errorf("ClusterCSIDriver client: %w", err)
	}
	kubeInformers := v1helpers.NewKubeInformersForNamespacesWithResyncPeriod(c.kube, resync, ns, "")
	configInformers := configinformers.NewSharedInformerFactory(c.config, resync)
	opInformers := operatorinformers.NewSharedInformerFactory(c.operator, resync)
	// Every DaemonSet named efs-csi-node, not only the community operator's: the hold-back tells the pods of a
	// deleted community DaemonSet from those of an unrelated one by their owner.
	communityDaemonSets := informers.NewSharedInformerFactoryWithOptions(c.kube, resync, informers.WithTweakListOptions(byName(takeover.DaemonSetName)))
	communityPods := informers.NewSharedInformerFactoryWithOptions(c.kube, resync, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = takeover.PodSelector().String()
	}))
	communityDeployments := informers.NewSharedInformerFactoryWithOptions(c.kube, resync, informers.WithTweakListOptions(byName(takeover.DeploymentName)))

	controllers, err := buildDriverControllers(driverInputs{
		opts: opts, clients: c, assetFunc: assetFunc, operatorClient: operatorClient,
		kubeInformers: kubeInformers, configInformers: configInformers, opInformers: opInformers,
		communityDaemonSets: communityDaemonSets, communityDeployments: communityDeployments, communityPods: communityPods,
	})
	if err != nil {
		return nil, err
	}
	for _, s := range []interface{ Start(<-chan struct{}) }{dynInformers, kubeInformers, configInformers, opInformers, communityDaemonSets, communityDeployments, communityPods} {
		s.Start(ctx.Done())
	}
	return runAll(ctx, controllers), nil
}

// runAll runs every controller until ctx ends. The returned channel closes once all of them have returned, which
// factory controllers do only after their workers have stopped.
func runAll(ctx context.Context, controllers []factory.Controller) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, ctrl := range controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer utilruntime.HandleCrash()
			ctrl.Run(ctx, 1)
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}
