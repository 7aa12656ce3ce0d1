package fsref

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
)

// ErrRefNotFound is wrapped when a fileSystemIdConfigRef/SecretRef object or key does not exist.
var ErrRefNotFound = errors.New("file system ID reference not found")

// KubeResolver reads the file system ID that a fileSystemIdConfigRef or fileSystemIdSecretRef points at, with one
// GET of the ConfigMap or Secret through client-go (the controller's service account needs get on it).
type KubeResolver struct {
	// Client is a clientset (or anything with its CoreV1 method: the driver links only the typed core/v1 client).
	Client interface {
		CoreV1() corev1client.CoreV1Interface
	}
}

// Resolve returns the value at ref: a ConfigMap data key, or a Secret data key, trimmed of surrounding space.
func (r KubeResolver) Resolve(ctx context.Context, ref scparams.ObjectRef, secret bool) (string, error) {
	kind, data, err := r.read(ctx, ref, secret)
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("%w: %s %s/%s does not exist", ErrRefNotFound, kind, ref.Namespace, ref.Name)
	case err != nil:
		return "", fmt.Errorf("get %s %s/%s: %w", kind, ref.Namespace, ref.Name, err)
	}
	v, found := data[ref.Key]
	if !found {
		return "", fmt.Errorf("%w: %s %s/%s has no key %q", ErrRefNotFound, kind, ref.Namespace, ref.Name, ref.Key)
	}
	return strings.TrimSpace(v), nil
}

// read fetches the data of the ConfigMap or Secret; Secret values arrive decoded from base64 already.
func (r KubeResolver) read(ctx context.Context, ref scparams.ObjectRef, secret bool) (kind string, data map[string]string, err error) {
	if !secret {
		cm, err := r.Client.CoreV1().ConfigMaps(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "configmap", nil, err
		}
		return "configmap", cm.Data, nil
	}
	s, err := r.Client.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return "secret", nil, err
	}
	data = make(map[string]string, len(s.Data))
	for k, v := range s.Data {
		data[k] = string(v)
	}
	return "secret", data, nil
}
