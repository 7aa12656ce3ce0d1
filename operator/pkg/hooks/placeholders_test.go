package hooks

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

func TestNoPlaceholdersLeftHoldsTheDeploymentUntilTheTLSProfileIsObserved(t *testing.T) {
	hook := NoPlaceholdersLeft(func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template })
	render := func(skipTLS bool) *appsv1.Deployment {
		values := map[string]string{}
		for _, m := range []map[string]string{testValues, libraryGoValues} {
			for k, v := range m {
				if !skipTLS || !strings.HasPrefix(k, "${TLS_") {
					values[k] = v
				}
			}
		}
		b, err := assets.Render(assets.ControllerDeployment, values)
		if err != nil {
			t.Fatal(err)
		}
		d := &appsv1.Deployment{}
		if err := yaml.Unmarshal(b, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if err := hook(managedSpec, render(false)); err != nil {
		t.Fatalf("hook on the Deployment with every placeholder filled = %v, want nil", err)
	}
	// As library-go leaves it before the config observer's first pass: the TLS profile's placeholders unfilled.
	err := hook(managedSpec, render(true))
	if err == nil || !strings.Contains(err.Error(), "${TLS_CIPHER_SUITES}") || !strings.Contains(err.Error(), "${TLS_MIN_VERSION}") {
		t.Fatalf("hook before the TLS profile is observed = %v, want an error naming both TLS placeholders", err)
	}
}
