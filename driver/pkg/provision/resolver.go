package provision

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// ErrRefNotFound is wrapped when a fileSystemIdConfigRef/SecretRef object or key does not exist.
var ErrRefNotFound = errors.New("file system ID reference not found")

// InClusterResolver reads the file system ID of fileSystemIdConfigRef / fileSystemIdSecretRef from the Kubernetes
// API with the pod's service account (GET on one ConfigMap or Secret; needs the matching RBAC).
type InClusterResolver struct {
	// Server is the API server URL, e.g. https://10.0.0.1:443.
	Server string
	// TokenFile holds the service account token; it is read on every call, so rotation is honoured.
	TokenFile string
	// Client is the HTTP client trusting the cluster CA.
	Client *http.Client
}

// Service account paths of an in-cluster pod.
const (
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// NewInClusterResolver builds a resolver from KUBERNETES_SERVICE_HOST/PORT and the mounted service account; host
// and port are passed in (read once by the caller from the environment).
func NewInClusterResolver(host, port string) (*InClusterResolver, error) {
	if host == "" || port == "" {
		return nil, errors.New("KUBERNETES_SERVICE_HOST/PORT are not set: not running in a cluster")
	}
	ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		return nil, fmt.Errorf("read cluster CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("cluster CA bundle has no certificate")
	}
	return &InClusterResolver{
		Server:    "https://" + net.JoinHostPort(host, port),
		TokenFile: serviceAccountDir + "/token",
		Client: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
	}, nil
}

// Resolve returns the value at ref: a ConfigMap data key, or a Secret data key (base64-decoded).
func (r *InClusterResolver) Resolve(ctx context.Context, ref ObjectRef, secret bool) (string, error) {
	kind := "configmaps"
	if secret {
		kind = "secrets"
	}
	u := fmt.Sprintf("%s/api/v1/namespaces/%s/%s/%s", r.Server, url.PathEscape(ref.Namespace), kind, url.PathEscape(ref.Name))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	token, err := os.ReadFile(r.TokenFile)
	if err != nil {
		return "", fmt.Errorf("read service account token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Accept", "application/json")
	resp, err := r.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("get %s %s/%s: %w", kind, ref.Namespace, ref.Name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return "", fmt.Errorf("%w: %s %s/%s does not exist", ErrRefNotFound, kind, ref.Namespace, ref.Name)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("get %s %s/%s: HTTP %d", kind, ref.Namespace, ref.Name, resp.StatusCode)
	}
	var obj struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return "", fmt.Errorf("decode %s %s/%s: %w", kind, ref.Namespace, ref.Name, err)
	}
	v, ok := obj.Data[ref.Key]
	if !ok {
		return "", fmt.Errorf("%w: %s %s/%s has no key %q", ErrRefNotFound, kind, ref.Namespace, ref.Name, ref.Key)
	}
	if secret {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return "", fmt.Errorf("secret %s/%s key %q is not base64: %w", ref.Namespace, ref.Name, ref.Key, err)
		}
		v = string(b)
	}
	return strings.TrimSpace(v), nil
}
