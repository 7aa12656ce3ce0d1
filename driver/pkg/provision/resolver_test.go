package provision

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestInClusterResolver serves the two Kubernetes API reads over TLS the way kube-apiserver answers them
// (ConfigMap data as text, Secret data base64) and checks the bearer token is sent.
func TestInClusterResolver(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sa-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/api/v1/namespaces/kube-system/configmaps/efs":
			_, _ = w.Write([]byte(`{"kind":"ConfigMap","data":{"fsid":"fs-0123abcd\n"}}`))
		case "/api/v1/namespaces/kube-system/secrets/efs":
			_, _ = w.Write([]byte(`{"kind":"Secret","data":{"fsid":"ZnMtMDEyM2FiY2U="}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("sa-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &InClusterResolver{Server: srv.URL, TokenFile: token, Client: srv.Client()}
	tests := []struct {
		ref     ObjectRef
		secret  bool
		want    string
		wantErr error
	}{
		{ObjectRef{"kube-system", "efs", "fsid"}, false, "fs-0123abcd", nil},
		{ObjectRef{"kube-system", "efs", "fsid"}, true, "fs-0123abce", nil},
		{ObjectRef{"kube-system", "efs", "other"}, false, "", ErrRefNotFound},
		{ObjectRef{"default", "efs", "fsid"}, true, "", ErrRefNotFound},
	}
	for _, tt := range tests {
		got, err := r.Resolve(t.Context(), tt.ref, tt.secret)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("Resolve(%+v, secret=%v) = %q, %v; want %q, %v", tt.ref, tt.secret, got, err, tt.want, tt.wantErr)
		}
	}
}
