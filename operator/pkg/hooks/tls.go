package hooks

import (
	"encoding/json"
	"fmt"
	"slices"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/operator/csi/csiconfigobservercontroller"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cipherSuitesArg is kube-rbac-proxy's argument in the shipped controller Deployment that takes the cluster TLS
// profile's cipher list.
const cipherSuitesArg = "--tls-cipher-suites=${TLS_CIPHER_SUITES}"

// ProfileWithoutCipherList returns the Deployment hook for a cluster TLS profile that lists no ciphers: a Custom
// profile with an empty cipher list (TLS 1.2 or a TLS 1.3-only one, whose suites Go does not let anyone choose).
// library-go's config observer then records an empty servingInfo.cipherSuites, and its WithServingInfo hook
// (openshift/library-go@0c9fbc9f043a pkg/operator/csi/csidrivercontrollerservicecontroller/helpers.go) fills
// ${TLS_CIPHER_SUITES} only from a non-empty list, so the argument would keep the literal placeholder and
// NoPlaceholdersLeft would hold the Deployment forever. The hook removes the argument: kube-rbac-proxy then uses
// crypto/tls's default suites above the profile's minimum version (still set by --tls-min-version), which is what a
// profile that restricts no cipher asks for. Before the observer's first pass (no observed list at all) the
// argument stays and NoPlaceholdersLeft keeps waiting, as before.
func ProfileWithoutCipherList() func(*opv1.OperatorSpec, *appsv1.Deployment) error {
	return func(spec *opv1.OperatorSpec, d *appsv1.Deployment) error {
		empty, err := observedEmptyCipherList(spec)
		if err != nil || !empty {
			return err
		}
		for i := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[i]
			c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return a == cipherSuitesArg })
		}
		return nil
	}
}

// observedEmptyCipherList reports whether the config observer recorded the cluster's TLS profile with no cipher.
func observedEmptyCipherList(spec *opv1.OperatorSpec) (bool, error) {
	if len(spec.ObservedConfig.Raw) == 0 {
		return false, nil
	}
	var observed map[string]any
	if err := json.Unmarshal(spec.ObservedConfig.Raw, &observed); err != nil {
		return false, fmt.Errorf("reading spec.observedConfig of the ClusterCSIDriver: %w", err)
	}
	ciphers, found, err := unstructured.NestedStringSlice(observed, csiconfigobservercontroller.CipherSuitesPath()...)
	if err != nil {
		return false, fmt.Errorf("reading spec.observedConfig.%v of the ClusterCSIDriver: %w", csiconfigobservercontroller.CipherSuitesPath(), err)
	}
	return found && len(ciphers) == 0, nil
}
