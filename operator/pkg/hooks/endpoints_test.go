package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func withEndpoints(eps ...configv1.AWSServiceEndpoint) *configv1.Infrastructure {
	infra := infrastructure("c-1", "")
	infra.Status.PlatformStatus.AWS.ServiceEndpoints = eps
	return infra
}

func TestServiceEndpointsEnv(t *testing.T) {
	tests := []struct {
		name    string
		infra   *configv1.Infrastructure
		want    []corev1.EnvVar
		wantErr string
	}{
		{name: "none", infra: withEndpoints()},
		{name: "no platform status", infra: &configv1.Infrastructure{}},
		{name: "the three services the driver calls, in a fixed order", infra: withEndpoints(
			configv1.AWSServiceEndpoint{Name: "sts", URL: "https://sts.us-gov-west-1.amazonaws.com"},
			configv1.AWSServiceEndpoint{Name: "ec2", URL: "https://ec2.example.internal:8443"},
			configv1.AWSServiceEndpoint{Name: "elasticfilesystem", URL: "https://vpce-0abc-efs.elasticfilesystem.us-east-1.vpce.amazonaws.com"}),
			want: []corev1.EnvVar{
				{Name: "AWS_ENDPOINT_URL_EFS", Value: "https://vpce-0abc-efs.elasticfilesystem.us-east-1.vpce.amazonaws.com"},
				{Name: "AWS_ENDPOINT_URL_EC2", Value: "https://ec2.example.internal:8443"},
				{Name: "AWS_ENDPOINT_URL_STS", Value: "https://sts.us-gov-west-1.amazonaws.com"},
				{Name: "AWS_REGION", Value: "us-east-1"},
			}},
		{name: "no region in the Infrastructure: the driver asks instance metadata", infra: func() *configv1.Infrastructure {
			infra := withEndpoints(configv1.AWSServiceEndpoint{Name: "ec2", URL: "https://ec2.example.internal"})
			infra.Status.PlatformStatus.AWS.Region = ""
			return infra
		}(), want: []corev1.EnvVar{{Name: "AWS_ENDPOINT_URL_EC2", Value: "https://ec2.example.internal"}}},
		{name: "services the driver does not call are ignored", infra: withEndpoints(
			configv1.AWSServiceEndpoint{Name: "s3", URL: "https://s3.example"}, configv1.AWSServiceEndpoint{Name: "elasticloadbalancing", URL: "not even a URL"}),
		},
		{name: "not https", infra: withEndpoints(configv1.AWSServiceEndpoint{Name: "ec2", URL: "http://ec2.example"}),
			wantErr: `serviceEndpoints[0] (ec2) url "http://ec2.example": want an absolute https:// URL`},
		{name: "no host", infra: withEndpoints(configv1.AWSServiceEndpoint{Name: "sts", URL: "https:///x"}), wantErr: "serviceEndpoints[0] (sts)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ServiceEndpointsEnv(tc.infra)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("env = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestServiceEndpointsOnShippedWorkloads runs the hook on the Deployment and DaemonSet as shipped: only the driver
// container gets the variables, and running the hook again changes nothing.
func TestServiceEndpointsOnShippedWorkloads(t *testing.T) {
	f := newFixture(t)
	f.add(t, withEndpoints(configv1.AWSServiceEndpoint{Name: "elasticfilesystem", URL: "https://efs.example"},
		configv1.AWSServiceEndpoint{Name: "sts", URL: "https://sts.example"}))
	infras := f.config.Config().V1().Infrastructures().Lister()
	d := shippedDeployment(t)
	ds := shippedDaemonSet(t)
	for range 2 {
		if err := ServiceEndpoints(infras, func(d *appsv1.Deployment) *corev1.PodSpec { return &d.Spec.Template.Spec })(managedSpec, d); err != nil {
			t.Fatal(err)
		}
		if err := ServiceEndpoints(infras, func(ds *appsv1.DaemonSet) *corev1.PodSpec { return &ds.Spec.Template.Spec })(managedSpec, ds); err != nil {
			t.Fatal(err)
		}
	}
	for what, spec := range map[string]*corev1.PodSpec{"Deployment": &d.Spec.Template.Spec, "DaemonSet": &ds.Spec.Template.Spec} {
		if v, _ := envOf(t, spec, DriverContainer, "AWS_ENDPOINT_URL_EFS"); v != "https://efs.example" {
			t.Errorf("%s AWS_ENDPOINT_URL_EFS = %q", what, v)
		}
		if v, _ := envOf(t, spec, DriverContainer, "AWS_ENDPOINT_URL_STS"); v != "https://sts.example" {
			t.Errorf("%s AWS_ENDPOINT_URL_STS = %q", what, v)
		}
		if v, _ := envOf(t, spec, DriverContainer, "AWS_REGION"); v != "us-east-1" {
			t.Errorf("%s AWS_REGION = %q, want the Infrastructure's region with custom endpoints", what, v)
		}
		if _, ok := envOf(t, spec, DriverContainer, "AWS_ENDPOINT_URL_EC2"); ok {
			t.Errorf("%s has AWS_ENDPOINT_URL_EC2 without an ec2 endpoint", what)
		}
		if n := countEnv(container(spec, DriverContainer).Env, "AWS_ENDPOINT_URL_EFS"); n != 1 {
			t.Errorf("%s: AWS_ENDPOINT_URL_EFS appears %d times", what, n)
		}
		for _, c := range spec.Containers {
			if c.Name == DriverContainer {
				continue
			}
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, "AWS_ENDPOINT_URL") {
					t.Errorf("%s container %s got %s", what, c.Name, e.Name)
				}
			}
		}
	}
}

// TestServiceEndpointsReachEFSUtils hands the variables the hook sets to our efs-utils (mount.efs's botocore
// fallback and its STS web identity call) and checks that it resolves the same endpoints: the names are a contract
// between the two components.
func TestServiceEndpointsReachEFSUtils(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run efs-utils (apt-get install -y python3)")
	}
	env, err := ServiceEndpointsEnv(withEndpoints(
		configv1.AWSServiceEndpoint{Name: "elasticfilesystem", URL: "https://efs.example:8443"},
		configv1.AWSServiceEndpoint{Name: "ec2", URL: "https://ec2.example"},
		configv1.AWSServiceEndpoint{Name: "sts", URL: "https://sts.example"}))
	if err != nil {
		t.Fatal(err)
	}
	efsUtils, err := filepath.Abs("../../../efs-utils")
	if err != nil {
		t.Fatal(err)
	}
	script := `import os, sys
sys.path.insert(0, sys.argv[1])
from efs_utils import credentials, fallback
print(fallback.endpoint_url("EFS", os.environ))
print(fallback.endpoint_url("EC2", os.environ))
print(credentials.sts_endpoint("us-east-1", os.environ))
`
	cmd := exec.CommandContext(t.Context(), python, "-c", script, efsUtils)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1"}
	for _, e := range env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("efs-utils: %v\n%s", err, out)
	}
	if got, want := strings.Fields(string(out)), []string{"https://efs.example:8443", "https://ec2.example", "https://sts.example"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("efs-utils resolves %q, want %q", got, want)
	}
}
