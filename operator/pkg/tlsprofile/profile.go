package tlsprofile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	"github.com/openshift/library-go/pkg/crypto"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	sigsyaml "sigs.k8s.io/yaml"
)

// Profile is what the serving endpoint is configured with.
type Profile struct {
	// MinTLSVersion is a crypto/tls version name such as VersionTLS12.
	MinTLSVersion string
	// CipherSuites are IANA names.
	CipherSuites []string
}

// Equal reports whether p and o configure the same thing.
func (p Profile) Equal(o Profile) bool {
	return p.MinTLSVersion == o.MinTLSVersion && slices.Equal(p.CipherSuites, o.CipherSuites)
}

// Resolve returns the profile an operator endpoint uses for apiServer (nil: not readable): the cluster's profile
// when spec.tlsAdherence says every component must honour it (library-go's ShouldHonorClusterTLSProfile), otherwise
// the default Intermediate profile.
func Resolve(apiServer *configv1.APIServer) Profile {
	var spec *configv1.TLSProfileSpec
	if apiServer != nil && crypto.ShouldHonorClusterTLSProfile(apiServer.Spec.TLSAdherence) {
		if p := apiServer.Spec.TLSSecurityProfile; p != nil {
			switch p.Type {
			case configv1.TLSProfileCustomType:
				if p.Custom != nil {
					spec = &p.Custom.TLSProfileSpec
				}
			case configv1.TLSProfileOldType, configv1.TLSProfileIntermediateType, configv1.TLSProfileModernType:
				spec = configv1.TLSProfiles[p.Type]
			}
		}
	}
	if spec == nil {
		spec = configv1.TLSProfiles[crypto.DefaultTLSProfileType]
	}
	return Profile{MinTLSVersion: string(spec.MinTLSVersion), CipherSuites: crypto.OpenSSLToIANACipherSuites(spec.Ciphers)}
}

// MergeConfig returns the GenericOperatorConfig base (YAML or JSON; empty for none) with p in servingInfo, every
// other field kept.
func MergeConfig(base []byte, p Profile) ([]byte, error) {
	obj := map[string]any{}
	if len(base) > 0 {
		if err := yaml.Unmarshal(base, &obj); err != nil {
			return nil, fmt.Errorf("parsing the operator configuration: %w", err)
		}
	}
	if obj == nil {
		obj = map[string]any{}
	}
	obj["apiVersion"], obj["kind"] = "operator.openshift.io/v1alpha1", "GenericOperatorConfig"
	serving, _ := obj["servingInfo"].(map[string]any)
	if serving == nil {
		serving = map[string]any{}
	}
	serving["minTLSVersion"] = p.MinTLSVersion
	delete(serving, "cipherSuites")
	if len(p.CipherSuites) > 0 {
		serving["cipherSuites"] = p.CipherSuites
	}
	obj["servingInfo"] = serving
	return sigsyaml.Marshal(obj)
}

// WriteConfig merges p into the configuration file at base ("" for none) and writes the result into dir, returning
// its path.
func WriteConfig(base, dir string, p Profile) (string, error) {
	var content []byte
	if base != "" {
		b, err := os.ReadFile(base)
		if err != nil {
			return "", fmt.Errorf("reading --config %s: %w", base, err)
		}
		content = b
	}
	merged, err := MergeConfig(content, p)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "operator-config.yaml")
	if err := os.WriteFile(path, merged, 0o600); err != nil {
		return "", fmt.Errorf("writing the operator configuration with the TLS profile: %w", err)
	}
	return path, nil
}

// WaitForChange returns when the profile resolved from APIServer/cluster differs from current, or ctx ends.
func WaitForChange(ctx context.Context, client configclient.Interface, current Profile) {
	factory := configinformers.NewSharedInformerFactory(client, 0)
	changed := make(chan struct{})
	var closed bool
	check := func(obj any) {
		as, ok := obj.(*configv1.APIServer)
		if !ok || as.Name != "cluster" || closed {
			return
		}
		p := Resolve(as)
		klog.V(2).InfoS("Checked the cluster's TLS profile for the operator", "minTLSVersion", p.MinTLSVersion, "changed", !p.Equal(current))
		if !p.Equal(current) {
			klog.InfoS("The cluster's TLS profile for the operator changed; restarting to serve with it",
				"minTLSVersion", p.MinTLSVersion, "cipherSuites", len(p.CipherSuites))
			closed = true
			close(changed)
		}
	}
	inf := factory.Config().V1().APIServers().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    check,
		UpdateFunc: func(_, obj any) { check(obj) },
	}); err != nil {
		klog.ErrorS(err, "Watching the cluster's TLS profile")
		return
	}
	stop := make(chan struct{})
	factory.Start(stop)
	select {
	case <-ctx.Done():
	case <-changed:
	}
	close(stop)
	factory.Shutdown()
}

// ReadAPIServer reads APIServer/cluster for Resolve, retrying until ctx ends. A cluster without that object (no
// profile was ever set) gives nil, which resolves to the default Intermediate profile, as library-go's config
// observer treats it. Any other failure is returned once ctx ends: serving with a guessed profile could be weaker
// than the cluster's (a Modern cluster read as Intermediate would accept TLS 1.2), so the operator does not start
// then, as OpenShift's own EFS operator does not (openshift/csi-operator@f7f9dc5 pkg/operator/tlsconfig.go:
// WriteOperatorTLSConfig returns any error of the Get, NotFound included, and WireTLSPreRunHook fails the
// command); its pod restarts and tries again. Unlike it, a missing object is not an error here: OpenShift always
// has one, and library-go's observer, which sets the driver's own profile, reads a missing one as the default.
func ReadAPIServer(ctx context.Context, client configclient.Interface) (*configv1.APIServer, error) {
	var apiServer *configv1.APIServer
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		as, err := client.ConfigV1().APIServers().Get(ctx, "cluster", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			lastErr = err
			klog.V(2).InfoS("Reading APIServer cluster for the TLS profile", "error", err.Error())
			return false, nil
		}
		apiServer = as
		return true, nil
	})
	if err != nil {
		if lastErr == nil {
			lastErr = err
		}
		return nil, fmt.Errorf("reading APIServer cluster for the cluster's TLS profile: %w; the operator serves metrics and health "+
			"only with the cluster's profile and never with a weaker default, so it does not start without it", lastErr)
	}
	return apiServer, nil
}
