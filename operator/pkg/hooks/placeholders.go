package hooks

import (
	"encoding/json"
	"fmt"
	"strings"

	opv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

// NoPlaceholdersLeft returns a workload hook that fails while the pod template still holds a ${NAME} placeholder.
// library-go fills the TLS profile's ${TLS_CIPHER_SUITES} and ${TLS_MIN_VERSION} from the config observer's
// observedConfig and leaves them as they are until its first pass: a Deployment created before then runs
// kube-rbac-proxy with a literal "${TLS_CIPHER_SUITES}" and is rolled again moments later, and the new
// csi-provisioner then waits out the old one's lease (137 s) before it provisions anything.
func NoPlaceholdersLeft[T any](podTemplate func(T) *corev1.PodTemplateSpec) func(*opv1.OperatorSpec, T) error {
	return func(_ *opv1.OperatorSpec, w T) error {
		b, err := json.Marshal(podTemplate(w))
		if err != nil {
			return err
		}
		if left := assets.Placeholders(b); len(left) > 0 {
			return fmt.Errorf("waiting to fill %s in the pod template (the TLS profile comes from AWSEFSDriverCSIConfigObserverController's first pass)", strings.Join(left, ", "))
		}
		return nil
	}
}
