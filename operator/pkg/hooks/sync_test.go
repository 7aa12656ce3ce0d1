package hooks

import (
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

// declaredOnly returns Inputs over clients that hold the driver's RBAC and a Managed ClusterCSIDriver, and a
// function that starts only the informers it is given and waits for their caches, as library-go's factory does
// for a controller's declared informers before its first sync. A hook reading a lister whose informer was not
// declared then reads an empty cache, as it may right after every operator start.
func declaredOnly(t *testing.T) (Inputs, func([]factory.Informer)) {
	t.Helper()
	rbac, rbacObjects := shippedRBAC(t)
	kube := kubefake.NewClientset(rbacObjects...)
	ops := operatorfake.NewClientset(&opv1.ClusterCSIDriver{ObjectMeta: metav1.ObjectMeta{Name: crName},
		Spec: opv1.ClusterCSIDriverSpec{OperatorSpec: opv1.OperatorSpec{ManagementState: opv1.Managed}}})
	conf := configfake.NewClientset(infrastructure("c-1", configv1.HighlyAvailableTopologyMode))
	nsInformers := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(testNamespace))
	clusterInformers := informers.NewSharedInformerFactory(kube, 0)
	opInformers := operatorinformers.NewSharedInformerFactory(ops, 0)
	community := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	in := Inputs{
		Namespace: testNamespace, ClusterCSIDriverName: crName,
		Kube: nsInformers, ClusterKube: clusterInformers, RBAC: rbac,
		Config:                     configinformers.NewSharedInformerFactory(conf, 0),
		ClusterCSIDrivers:          opInformers.Operator().V1().ClusterCSIDrivers().Lister(),
		ClusterCSIDriverInformer:   opInformers.Operator().V1().ClusterCSIDrivers().Informer(),
		CommunityDaemonSets:        community.Apps().V1().DaemonSets().Lister(),
		CommunityDaemonSetInformer: community.Apps().V1().DaemonSets().Informer(),
		CommunityPods:              community.Core().V1().Pods().Lister(),
		CommunityPodInformer:       community.Core().V1().Pods().Informer(),
	}
	start := func(declared []factory.Informer) {
		stop := make(chan struct{})
		t.Cleanup(func() { close(stop) })
		var synced []cache.InformerSynced
		var started []factory.Informer
		for _, inf := range declared {
			if slices.Contains(started, inf) {
				continue
			}
			started = append(started, inf)
			go inf.(cache.SharedIndexInformer).Run(stop)
			synced = append(synced, inf.HasSynced)
		}
		done := make(chan struct{})
		go func() { cache.WaitForCacheSync(stop, synced...); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("declared informers did not sync")
		}
	}
	return in, start
}

// TestWorkloadHooksReadOnlyDeclaredInformers: with only the informers the hook lists declare started and synced,
// the hooks pass on a cluster where the RBAC is in place. Before the RBAC informers were declared, RBACInPlace
// read empty listers at start-up and reported the ServiceAccount and its bindings missing (Degraded).
func TestWorkloadHooksReadOnlyDeclaredInformers(t *testing.T) {
	t.Run("Deployment", func(t *testing.T) {
		in, start := declaredOnly(t)
		hooks, declared := Deployment(in)
		start(declared)
		d := render[appsv1.Deployment](t, assets.ControllerDeployment, withLibraryGo(testValues))
		for i, h := range hooks {
			if err := h(observedProxy(), d); err != nil {
				t.Fatalf("Deployment hook %d on synced declared informers: %v", i, err)
			}
		}
	})
	t.Run("DaemonSet", func(t *testing.T) {
		in, start := declaredOnly(t)
		hooks, declared := DaemonSet(in)
		start(declared)
		ds := filledDaemonSet(t)
		for i, h := range hooks {
			if err := h(managedSpec, ds); err != nil {
				t.Fatalf("DaemonSet hook %d on synced declared informers: %v", i, err)
			}
		}
	})
}
