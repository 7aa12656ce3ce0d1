package operator

import (
	"fmt"

	opv1 "github.com/openshift/api/operator/v1"
	applyoperatorv1 "github.com/openshift/client-go/operator/applyconfigurations/operator/v1"
	"github.com/openshift/library-go/pkg/operator/genericoperatorclient"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// newOperatorClient returns library-go's client for the ClusterCSIDriver named ClusterCSIDriverName.
func newOperatorClient(cfg *rest.Config) (v1helpers.OperatorClientWithFinalizers, dynamicinformer.DynamicSharedInformerFactory, error) {
	gvr := opv1.GroupVersion.WithResource("clustercsidrivers")
	gvk := opv1.GroupVersion.WithKind("ClusterCSIDriver")
	return genericoperatorclient.NewClusterScopedOperatorClientWithConfigName(clock.RealClock{}, cfg, gvr, gvk, ClusterCSIDriverName, extractSpec, extractStatus)
}

func toClusterCSIDriver(obj *unstructured.Unstructured) (*opv1.ClusterCSIDriver, error) {
	cr := &opv1.ClusterCSIDriver{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.UnstructuredContent(), cr); err != nil {
		return nil, fmt.Errorf("decoding ClusterCSIDriver %s: %w", obj.GetName(), err)
	}
	return cr, nil
}

func extractSpec(obj *unstructured.Unstructured, fieldManager string) (*applyoperatorv1.OperatorSpecApplyConfiguration, error) {
	cr, err := toClusterCSIDriver(obj)
	if err != nil {
		return nil, err
	}
	ac, err := applyoperatorv1.ExtractClusterCSIDriver(cr, fieldManager)
	if err != nil {
		return nil, err
	}
	if ac.Spec == nil {
		return nil, nil
	}
	return &ac.Spec.OperatorSpecApplyConfiguration, nil
}

func extractStatus(obj *unstructured.Unstructured, fieldManager string) (*applyoperatorv1.OperatorStatusApplyConfiguration, error) {
	cr, err := toClusterCSIDriver(obj)
	if err != nil {
		return nil, err
	}
	ac, err := applyoperatorv1.ExtractClusterCSIDriverStatus(cr, fieldManager)
	if err != nil {
		return nil, err
	}
	if ac.Status == nil {
		return nil, nil
	}
	return &ac.Status.OperatorStatusApplyConfiguration, nil
}
