package hooks

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	"github.com/openshift/library-go/pkg/operator/configobserver/apiserver"
	"github.com/openshift/library-go/pkg/operator/csi/csiconfigobservercontroller"
	"github.com/openshift/library-go/pkg/operator/csi/csidrivercontrollerservicecontroller"
	"github.com/openshift/library-go/pkg/operator/events"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

// observedTLS runs library-go's own TLS profile observer, as the CSI config observer controller does, on an
// APIServer with profile and returns the ClusterCSIDriver spec that results.
func observedTLS(t *testing.T, profile *configv1.TLSSecurityProfile) *opv1.OperatorSpec {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := idx.Add(&configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: configv1.APIServerSpec{TLSSecurityProfile: profile}}); err != nil {
		t.Fatal(err)
	}
	listers := csiconfigobservercontroller.Listers{APIServerLister_: configlisters.NewAPIServerLister(idx)}
	observed, errs := apiserver.ObserveTLSSecurityProfileWithPaths(listers, events.NewInMemoryRecorder("test", clock.RealClock{}), map[string]any{},
		csiconfigobservercontroller.MinTLSVersionPath(), csiconfigobservercontroller.CipherSuitesPath())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	raw, err := json.Marshal(observed)
	if err != nil {
		t.Fatal(err)
	}
	return &opv1.OperatorSpec{ManagementState: opv1.Managed, ObservedConfig: runtime.RawExtension{Raw: raw}}
}

// TestTLSProfilesWithoutCipherList renders the shipped controller Deployment through library-go's WithServingInfo
// hook with the observation of each kind of profile, then through ProfileWithoutCipherList and
// NoPlaceholdersLeft: every profile gives a Deployment without placeholders, and kube-rbac-proxy gets the profile's
// minimum version and, when the profile lists ciphers, those.
func TestTLSProfilesWithoutCipherList(t *testing.T) {
	tests := []struct {
		name        string
		profile     *configv1.TLSSecurityProfile
		wantMin     string
		wantCiphers string // "" when no --tls-cipher-suites argument is wanted
	}{
		{name: "default Intermediate", wantMin: "VersionTLS12", wantCiphers: "TLS_AES_128_GCM_SHA256,"},
		{name: "Modern", profile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType, Modern: &configv1.ModernTLSProfile{}},
			wantMin: "VersionTLS13", wantCiphers: "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256"},
		{name: "Custom with no cipher list", wantMin: "VersionTLS12", profile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType,
			Custom: &configv1.CustomTLSProfile{TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS12}}}},
		{name: "Custom TLS 1.3 only", wantMin: "VersionTLS13", profile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType,
			Custom: &configv1.CustomTLSProfile{TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS13, Ciphers: []string{}}}}},
	}
	values := maps.Clone(withLibraryGo(testValues))
	delete(values, "${TLS_CIPHER_SUITES}")
	delete(values, "${TLS_MIN_VERSION}")
	manifest, err := assets.Render(assets.ControllerDeployment, values)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := observedTLS(t, tc.profile)
			b, err := csidrivercontrollerservicecontroller.WithServingInfo()(spec, manifest)
			if err != nil {
				t.Fatalf("library-go's WithServingInfo: %v", err)
			}
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal(b, d); err != nil {
				t.Fatal(err)
			}
			if err := ProfileWithoutCipherList()(spec, d); err != nil {
				t.Fatal(err)
			}
			if err := NoPlaceholdersLeft(func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template })(spec, d); err != nil {
				t.Fatalf("Deployment held back: %v", err)
			}
			podSpec := &d.Spec.Template.Spec
			if got := argsWithPrefix(t, podSpec, "provisioner-kube-rbac-proxy", "--tls-min-version="); !slices.Equal(got, []string{"--tls-min-version=" + tc.wantMin}) {
				t.Errorf("kube-rbac-proxy min version args = %v, want %s", got, tc.wantMin)
			}
			got := argsWithPrefix(t, podSpec, "provisioner-kube-rbac-proxy", "--tls-cipher-suites=")
			switch {
			case tc.wantCiphers == "" && len(got) != 0:
				t.Errorf("kube-rbac-proxy cipher args = %v, want none (the profile lists no cipher)", got)
			case tc.wantCiphers != "" && (len(got) != 1 || !strings.HasPrefix(got[0], "--tls-cipher-suites="+tc.wantCiphers)):
				t.Errorf("kube-rbac-proxy cipher args = %v, want one starting with %s", got, tc.wantCiphers)
			}
		})
	}
}

// TestProfileWithoutCipherListWaitsForTheObserver: before the config observer's first pass the argument stays, so
// that NoPlaceholdersLeft keeps the Deployment back until the profile is known.
func TestProfileWithoutCipherListWaitsForTheObserver(t *testing.T) {
	d := render[appsv1.Deployment](t, assets.ControllerDeployment, testValues)
	if err := ProfileWithoutCipherList()(managedSpec, d); err != nil {
		t.Fatal(err)
	}
	if got := argsWithPrefix(t, &d.Spec.Template.Spec, "provisioner-kube-rbac-proxy", "--tls-cipher-suites="); !slices.Equal(got, []string{cipherSuitesArg}) {
		t.Fatalf("cipher args before any observation = %v, want %s kept", got, cipherSuitesArg)
	}
}
