package fsref

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
)

// TestKubeResolver reads both reference kinds from client-go's stateful fake clientset: ConfigMap data as text,
// Secret data as bytes, with missing objects and keys reported as ErrRefNotFound.
func TestKubeResolver(t *testing.T) {
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "efs"}, Data: map[string]string{"fsid": "fs-0123abcd\n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "efs"}, Data: map[string][]byte{"fsid": []byte("fs-0123abce")}},
	)
	r := KubeResolver{Client: client}
	tests := []struct {
		ref     scparams.ObjectRef
		secret  bool
		want    string
		wantErr error
	}{
		{scparams.ObjectRef{Namespace: "kube-system", Name: "efs", Key: "fsid"}, false, "fs-0123abcd", nil},
		{scparams.ObjectRef{Namespace: "kube-system", Name: "efs", Key: "fsid"}, true, "fs-0123abce", nil},
		{scparams.ObjectRef{Namespace: "kube-system", Name: "efs", Key: "other"}, false, "", ErrRefNotFound},
		{scparams.ObjectRef{Namespace: "kube-system", Name: "efs", Key: "other"}, true, "", ErrRefNotFound},
		{scparams.ObjectRef{Namespace: "default", Name: "efs", Key: "fsid"}, true, "", ErrRefNotFound},
		{scparams.ObjectRef{Namespace: "default", Name: "efs", Key: "fsid"}, false, "", ErrRefNotFound},
	}
	for _, tt := range tests {
		got, err := r.Resolve(t.Context(), tt.ref, tt.secret)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("Resolve(%+v, secret=%v) = %q, %v; want %q, %v", tt.ref, tt.secret, got, err, tt.want, tt.wantErr)
		}
	}
}
