package imagebuild

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// registryOptions is how every registry is reached: base pulls and pushes.
type registryOptions struct {
	// insecure allows plain HTTP to any registry; without it only loopback registries may use HTTP.
	insecure  bool
	keychain  authn.Keychain
	transport http.RoundTripper
	jobs      int
	// sent counts request body bytes (blob and manifest uploads).
	sent *atomic.Int64
}

func (r registryOptions) nameOptions() []name.Option {
	if r.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

func (r registryOptions) remoteOptions(ctx context.Context) []remote.Option {
	next := r.transport
	if next == nil {
		next = remote.DefaultTransport
	}
	kc := r.keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithTransport(&policyTransport{next: next, insecure: r.insecure, sent: r.sent}),
		remote.WithJobs(max(r.jobs, 1)),
	}
}

// policyTransport refuses plain HTTP unless it was asked for or the registry is on loopback (go-containerregistry
// would otherwise fall back to HTTP for private network addresses too), and counts uploaded bytes.
type policyTransport struct {
	next     http.RoundTripper
	insecure bool
	sent     *atomic.Int64
}

func (t *policyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !t.insecure && !isLoopback(req.URL.Hostname()) {
		return nil, fmt.Errorf("plain HTTP to %s refused: set REGISTRY_INSECURE=true to allow it", req.URL.Host)
	}
	if t.sent != nil && req.Body != nil && (req.Method == http.MethodPut || req.Method == http.MethodPatch || req.Method == http.MethodPost) {
		req = req.Clone(req.Context())
		req.Body = &countingBody{ReadCloser: req.Body, n: t.sent}
	}
	return t.next.RoundTrip(req)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}
