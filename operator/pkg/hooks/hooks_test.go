package hooks

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestFIPSOnShippedWorkloads(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		want := map[bool]string{true: "true", false: "false"}[enabled]

		d := shippedDeployment(t)
		if err := FIPSDeployment(enabled)(managedSpec, d); err != nil {
			t.Fatal(err)
		}
		// Running the hook twice must not duplicate the variable.
		if err := FIPSDeployment(enabled)(managedSpec, d); err != nil {
			t.Fatal(err)
		}
		if got, _ := envOf(t, &d.Spec.Template.Spec, DriverContainer, EnvFIPSEnabled); got != want {
			t.Errorf("Deployment FIPS_ENABLED = %q, want %q", got, want)
		}
		if n := countEnv(d.Spec.Template.Spec.Containers[0].Env, EnvFIPSEnabled); n != 1 {
			t.Errorf("FIPS_ENABLED appears %d times", n)
		}

		ds := shippedDaemonSet(t)
		if err := FIPSDaemonSet(enabled)(managedSpec, ds); err != nil {
			t.Fatal(err)
		}
		if got, _ := envOf(t, &ds.Spec.Template.Spec, DriverContainer, EnvFIPSEnabled); got != want {
			t.Errorf("DaemonSet FIPS_ENABLED = %q, want %q", got, want)
		}
		if _, ok := envOf(t, &ds.Spec.Template.Spec, "csi-node-driver-registrar", EnvFIPSEnabled); ok {
			t.Error("FIPS_ENABLED set on the registrar, want only the driver container")
		}
	}

	ds := shippedDaemonSet(t)
	ds.Spec.Template.Spec.Containers = ds.Spec.Template.Spec.Containers[1:]
	if err := FIPSDaemonSet(true)(managedSpec, ds); err == nil || !strings.Contains(err.Error(), DriverContainer) {
		t.Fatalf("FIPS hook without a driver container: err = %v, want one naming %q", err, DriverContainer)
	}
}

func countEnv(env []corev1.EnvVar, name string) int {
	n := 0
	for _, e := range env {
		if e.Name == name {
			n++
		}
	}
	return n
}

func TestTagsArg(t *testing.T) {
	tests := []struct {
		name    string
		infra   *configv1.Infrastructure
		want    string
		wantErr string
	}{
		{name: "no tags", infra: infrastructure("c-1", configv1.HighlyAvailableTopologyMode), want: "--tags=kubernetes.io/cluster/c-1:owned"},
		{name: "tags in order", infra: infrastructure("c-1", "", configv1.AWSResourceTag{Key: "team", Value: "storage"}, configv1.AWSResourceTag{Key: "cost", Value: "42"}),
			want: "--tags=team:storage cost:42 kubernetes.io/cluster/c-1:owned"},
		{name: "unusable tags skipped", infra: infrastructure("c-1", "", configv1.AWSResourceTag{Key: "", Value: "x"}, configv1.AWSResourceTag{Key: "k", Value: ""}, configv1.AWSResourceTag{Key: "has\ttab", Value: "v"}, configv1.AWSResourceTag{Key: "ok", Value: "1"}),
			want: "--tags=ok:1 kubernetes.io/cluster/c-1:owned"},
		{name: "no platform status", infra: &configv1.Infrastructure{Status: configv1.InfrastructureStatus{InfrastructureName: "c-2"}}, want: "--tags=kubernetes.io/cluster/c-2:owned"},
		{name: "no infrastructure name", infra: infrastructure("", ""), wantErr: "status.infrastructureName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TagsArg(tc.infra)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("TagsArg err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("TagsArg = %q, want %q", got, tc.want)
			}
		})
	}
}

// tagsContract holds rows of resource tags and the --tags argument the operator passes for them; the driver's
// manifests test parses the same arguments with its --tags parser and expects the same tags back.
const tagsContract = "testdata/tags-contract.json"

func TestTagsArgContract(t *testing.T) {
	data, err := os.ReadFile(tagsContract)
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Name string                    `json:"name"`
		Tags []configv1.AWSResourceTag `json:"tags"`
		Arg  string                    `json:"arg"`
	}
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatalf("%s: %v", tagsContract, err)
	}
	for _, r := range rows {
		t.Run(r.Name, func(t *testing.T) {
			got, err := TagsArg(infrastructure("c-1", "", r.Tags...))
			if err != nil {
				t.Fatal(err)
			}
			if got != r.Arg {
				t.Fatalf("TagsArg = %q, want %q (%s)", got, r.Arg, tagsContract)
			}
		})
	}
}

func FuzzTagsArg(f *testing.F) {
	f.Add("c-1", "team", "storage")
	f.Add("x", "", "v")
	f.Add("", "k", "v")
	f.Fuzz(func(t *testing.T, name, key, value string) {
		got, err := TagsArg(infrastructure(name, "", configv1.AWSResourceTag{Key: key, Value: value}))
		if name == "" {
			if err == nil {
				t.Fatal("empty infrastructure name accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, "--tags=") || !strings.HasSuffix(got, "kubernetes.io/cluster/"+name+":owned") {
			t.Fatalf("TagsArg = %q", got)
		}
	})
}

func TestTagsReplaceShippedArgument(t *testing.T) {
	d := shippedDeployment(t)
	if got := argsWithPrefix(t, &d.Spec.Template.Spec, DriverContainer, "--tags="); len(got) != 1 {
		t.Fatalf("shipped controller has %d --tags arguments, want 1", len(got))
	}
	infra := infrastructure("c-9", "", configv1.AWSResourceTag{Key: "a", Value: "b"})
	for range 2 {
		if err := setTags(d, infra); err != nil {
			t.Fatal(err)
		}
	}
	got := argsWithPrefix(t, &d.Spec.Template.Spec, DriverContainer, "--tags=")
	if want := []string{"--tags=a:b kubernetes.io/cluster/c-9:owned"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("--tags after hook = %q, want %q", got, want)
	}
	if args := argsWithPrefix(t, &d.Spec.Template.Spec, DriverContainer, "--delete-access-point-root-dir=true"); len(args) != 1 {
		t.Fatal("tags hook dropped other driver arguments")
	}
}

func TestVolumeMetricsArgs(t *testing.T) {
	rw := func(period, limit int32) *opv1.AWSEFSVolumeMetrics {
		return &opv1.AWSEFSVolumeMetrics{State: opv1.AWSEFSVolumeMetricsRecursiveWalk,
			RecursiveWalk: &opv1.AWSEFSVolumeMetricsRecursiveWalkConfig{RefreshPeriodMinutes: period, FSRateLimit: limit}}
	}
	tests := []struct {
		name string
		in   *opv1.AWSEFSVolumeMetrics
		want []string
	}{
		{name: "unset", in: nil, want: nil},
		{name: "disabled", in: &opv1.AWSEFSVolumeMetrics{State: opv1.AWSEFSVolumeMetricsDisabled}, want: nil},
		{name: "recursive walk, defaults", in: &opv1.AWSEFSVolumeMetrics{State: opv1.AWSEFSVolumeMetricsRecursiveWalk}, want: []string{"--vol-metrics-opt-in=true"}},
		{name: "recursive walk, both", in: rw(240, 5), want: []string{"--vol-metrics-opt-in=true", "--vol-metrics-refresh-period=240", "--vol-metrics-fs-rate-limit=5"}},
		{name: "recursive walk, period only", in: rw(30, 0), want: []string{"--vol-metrics-opt-in=true", "--vol-metrics-refresh-period=30"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := VolumeMetricsArgs(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("VolumeMetricsArgs = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNodeDNSPolicy(t *testing.T) {
	ds := shippedDaemonSet(t)
	if ds.Spec.Template.Spec.DNSPolicy != corev1.DNSDefault || !ds.Spec.Template.Spec.HostNetwork {
		t.Fatalf("shipped node DaemonSet: dnsPolicy %q hostNetwork %v, want Default and true", ds.Spec.Template.Spec.DNSPolicy, ds.Spec.Template.Spec.HostNetwork)
	}
	ds.Spec.Template.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	if err := NodeDNSPolicy()(managedSpec, ds); err != nil {
		t.Fatal(err)
	}
	if ds.Spec.Template.Spec.DNSPolicy != corev1.DNSDefault {
		t.Fatalf("dnsPolicy = %q after hook, want Default", ds.Spec.Template.Spec.DNSPolicy)
	}
}

// TestShippedWorkloadsKeepOpenShiftPodSettings pins the container settings of OpenShift's own EFS operator that the
// shipped workloads keep (operator-inventory §3): the driver's 1Gi memory limit in both workloads and a read-only
// root file system for every sidecar, the node driver and the registrar included.
func TestShippedWorkloadsKeepOpenShiftPodSettings(t *testing.T) {
	limit := resource.MustParse("1Gi")
	d, ds := shippedDeployment(t), shippedDaemonSet(t)
	for what, spec := range map[string]*corev1.PodSpec{"Deployment": &d.Spec.Template.Spec, "DaemonSet": &ds.Spec.Template.Spec} {
		if got := container(spec, DriverContainer).Resources.Limits[corev1.ResourceMemory]; got.Cmp(limit) != 0 {
			t.Errorf("%s csi-driver memory limit %v, want 1Gi", what, got.String())
		}
		for _, c := range spec.Containers {
			if c.Name == DriverContainer && what == "Deployment" {
				continue // the controller's driver mounts file systems to delete access point roots
			}
			if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s container %s: readOnlyRootFilesystem not true", what, c.Name)
			}
		}
	}
}
