package hooks

import (
	"maps"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

func TestNoPlaceholdersLeftHoldsTheDeploymentUntilTheTLSProfileIsObserved(t *testing.T) {
	hook := NoPlaceholdersLeft(func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template })
	filled := withLibraryGo(testValues)
	beforeObservation := maps.Clone(filled)
	delete(beforeObservation, "${TLS_CIPHER_SUITES}")
	delete(beforeObservation, "${TLS_MIN_VERSION}")
	if err := hook(managedSpec, render[appsv1.Deployment](t, assets.ControllerDeployment, filled)); err != nil {
		t.Fatalf("hook on the Deployment with every placeholder filled = %v, want nil", err)
	}
	// As library-go leaves it before the config observer's first pass: the TLS profile's placeholders unfilled.
	err := hook(managedSpec, render[appsv1.Deployment](t, assets.ControllerDeployment, beforeObservation))
	if err == nil || !strings.Contains(err.Error(), "${TLS_CIPHER_SUITES}") || !strings.Contains(err.Error(), "${TLS_MIN_VERSION}") {
		t.Fatalf("hook before the TLS profile is observed = %v, want an error naming both TLS placeholders", err)
	}
}
