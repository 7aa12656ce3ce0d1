package tlsprofile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	clienttesting "k8s.io/client-go/testing"
)

func apiServer(adherence configv1.TLSAdherencePolicy, profile *configv1.TLSSecurityProfile) *configv1.APIServer {
	return &configv1.APIServer{Spec: configv1.APIServerSpec{TLSAdherence: adherence, TLSSecurityProfile: profile}}
}

func TestResolve(t *testing.T) {
	modern := &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType, Modern: &configv1.ModernTLSProfile{}}
	custom := &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{TLSProfileSpec: configv1.TLSProfileSpec{
		MinTLSVersion: configv1.VersionTLS12, Ciphers: []string{"ECDHE-RSA-AES128-GCM-SHA256"}}}}
	tests := []struct {
		name       string
		apiServer  *configv1.APIServer
		wantMin    string
		wantCipher string
	}{
		{name: "APIServer not readable: Intermediate", apiServer: nil, wantMin: "VersionTLS12", wantCipher: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		{name: "no adherence policy: Intermediate even with Modern set", apiServer: apiServer("", modern), wantMin: "VersionTLS12"},
		{name: "legacy adherence: Intermediate", apiServer: apiServer(configv1.TLSAdherencePolicyLegacyAdheringComponentsOnly, modern), wantMin: "VersionTLS12"},
		{name: "strict: the cluster's Modern profile", apiServer: apiServer(configv1.TLSAdherencePolicyStrictAllComponents, modern), wantMin: "VersionTLS13", wantCipher: "TLS_AES_128_GCM_SHA256"},
		{name: "strict: custom", apiServer: apiServer(configv1.TLSAdherencePolicyStrictAllComponents, custom), wantMin: "VersionTLS12", wantCipher: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		{name: "strict, no profile: Intermediate", apiServer: apiServer(configv1.TLSAdherencePolicyStrictAllComponents, nil), wantMin: "VersionTLS12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Resolve(tc.apiServer)
			if p.MinTLSVersion != tc.wantMin {
				t.Fatalf("MinTLSVersion = %s, want %s", p.MinTLSVersion, tc.wantMin)
			}
			if tc.wantCipher != "" && !slices.Contains(p.CipherSuites, tc.wantCipher) {
				t.Fatalf("cipher suites %v lack %s", p.CipherSuites, tc.wantCipher)
			}
			for _, c := range p.CipherSuites {
				if !strings.HasPrefix(c, "TLS_") {
					t.Fatalf("cipher %q is not an IANA name", c)
				}
			}
		})
	}
}

// TestWriteConfigKeepsTheGivenConfiguration: the CSV's configuration (the service-ca certificate) stays; the TLS
// settings are replaced, and what controllercmd reads back is a GenericOperatorConfig with both.
func TestWriteConfigKeepsTheGivenConfiguration(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	if err := os.WriteFile(base, []byte(`apiVersion: operator.openshift.io/v1alpha1
kind: GenericOperatorConfig
servingInfo:
  certFile: /var/run/secrets/serving-cert/tls.crt
  keyFile: /var/run/secrets/serving-cert/tls.key
  cipherSuites: [TLS_RSA_WITH_RC4_128_SHA]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Profile{MinTLSVersion: "VersionTLS13"}
	path, err := WriteConfig(base, dir, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &operatorv1alpha1.GenericOperatorConfig{}
	if err := yaml.Unmarshal(b, cfg); err != nil {
		t.Fatal(err)
	}
	s := cfg.ServingInfo
	if s.CertFile != "/var/run/secrets/serving-cert/tls.crt" || s.KeyFile != "/var/run/secrets/serving-cert/tls.key" ||
		s.MinTLSVersion != "VersionTLS13" || len(s.CipherSuites) != 0 {
		t.Fatalf("merged servingInfo %+v", s)
	}
	if _, err := WriteConfig("", dir, Profile{MinTLSVersion: "VersionTLS12", CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}}); err != nil {
		t.Fatalf("no given configuration: %v", err)
	}
	if _, err := MergeConfig([]byte("servingInfo: ["), p); err == nil {
		t.Fatal("malformed configuration: want an error")
	}
}

// TestWaitForChangeReturnsOnANewProfile: an edit that leaves the resolved profile alone is ignored; one that changes
// it ends the wait (the operator then restarts).
func TestWaitForChangeReturnsOnANewProfile(t *testing.T) {
	as := apiServer(configv1.TLSAdherencePolicyStrictAllComponents, &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType})
	as.Name = "cluster"
	client := configfake.NewClientset(as)
	done := make(chan struct{})
	go func() {
		WaitForChange(t.Context(), client, Resolve(as))
		close(done)
	}()
	update := func(mutate func(*configv1.APIServer)) {
		t.Helper()
		cur, err := client.ConfigV1().APIServers().Get(t.Context(), "cluster", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(cur)
		if _, err := client.ConfigV1().APIServers().Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update(func(a *configv1.APIServer) { a.Spec.Audit.Profile = configv1.AllRequestBodiesAuditProfileType })
	select {
	case <-done:
		t.Fatal("returned on an edit that keeps the profile")
	case <-time.After(300 * time.Millisecond):
	}
	update(func(a *configv1.APIServer) { a.Spec.TLSSecurityProfile.Type = configv1.TLSProfileIntermediateType })
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting after the profile changed")
	}
}

func TestReadAPIServer(t *testing.T) {
	t.Run("found", func(t *testing.T) {
		client := configfake.NewClientset(&configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: configv1.APIServerSpec{TLSSecurityProfile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType}}})
		as, err := ReadAPIServer(t.Context(), client)
		if err != nil || as == nil || as.Spec.TLSSecurityProfile.Type != configv1.TLSProfileModernType {
			t.Fatalf("ReadAPIServer = %v, %v", as, err)
		}
	})
	t.Run("missing reads as no profile", func(t *testing.T) {
		as, err := ReadAPIServer(t.Context(), configfake.NewClientset())
		if err != nil || as != nil {
			t.Fatalf("ReadAPIServer = %v, %v; want nil, nil", as, err)
		}
	})
	t.Run("forbidden refuses once the time is up", func(t *testing.T) {
		client := configfake.NewClientset()
		client.PrependReactor("get", "apiservers", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "config.openshift.io", Resource: "apiservers"}, "cluster", errors.New("no RBAC"))
		})
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		as, err := ReadAPIServer(ctx, client)
		if err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "never with a weaker default") {
			t.Fatalf("ReadAPIServer = %v, %v; want the forbidden error and the refusal", as, err)
		}
	})
}
