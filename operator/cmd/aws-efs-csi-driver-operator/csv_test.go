package main

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/openshift/aws-efs-csi/operator/pkg/config"
)

// csvFile is the OLM ClusterServiceVersion whose Deployment runs this binary.
const csvFile = "../../manifests/aws-efs-csi-driver-operator.clusterserviceversion.yaml"

// csvOperatorContainer reads the operator container of the CSV's install Deployment and the CSV's related images.
func csvOperatorContainer(t *testing.T) (corev1.Container, []string) {
	t.Helper()
	f, err := os.Open(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var csv struct {
		Spec struct {
			RelatedImages []struct {
				Image string `json:"image"`
			} `json:"relatedImages"`
			Install struct {
				Spec struct {
					Deployments []struct {
						Name string                `json:"name"`
						Spec appsv1.DeploymentSpec `json:"spec"`
					} `json:"deployments"`
				} `json:"spec"`
			} `json:"install"`
		} `json:"spec"`
	}
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&csv); err != nil {
		t.Fatalf("%s: %v", csvFile, err)
	}
	for _, d := range csv.Spec.Install.Spec.Deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == componentName {
				var related []string
				for _, r := range csv.Spec.RelatedImages {
					related = append(related, r.Image)
				}
				return c, related
			}
		}
	}
	t.Fatalf("%s has no %s container", csvFile, componentName)
	return corev1.Container{}, nil
}

// TestCSVStartsTheOperator parses the CSV container's arguments with this binary's commands and checks that the
// CSV sets every environment variable the operator needs at start-up, so that a flag or image variable renamed on
// one side fails here instead of in an installed operator.
func TestCSVStartsTheOperator(t *testing.T) {
	c, related := csvOperatorContainer(t)
	if len(c.Command) != 0 {
		t.Fatalf("CSV container command %q replaces the image ENTRYPOINT; want args only", c.Command)
	}
	cmd := newRootCommand(io.Discard)
	start, rest, err := cmd.Find(c.Args)
	if err != nil {
		t.Fatal(err)
	}
	if start.Name() != "start" {
		t.Fatalf("CSV args %q run %q, want start", c.Args, start.Name())
	}
	if err := start.ParseFlags(rest); err != nil {
		t.Fatalf("the operator refuses the CSV's arguments %q: %v", c.Args, err)
	}
	if start.Flags().NArg() != 0 {
		t.Fatalf("CSV args %q leave positional arguments %q", c.Args, start.Flags().Args())
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	cfg := config.FromEnv(func(k string) string { return env[k] }, "openshift-cluster-csi-drivers")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the operator cannot start with the CSV's environment: %v", err)
	}
	for name, v := range env {
		// The CSV is plain YAML that ART and mage both consume: every image the operator deploys is pinned by
		// digest there and listed in relatedImages, so that disconnected clusters mirror it.
		if strings.HasSuffix(name, "_IMAGE") && (!strings.Contains(v, "@sha256:") || !slices.Contains(related, v)) {
			t.Errorf("CSV env %s = %q, want an image pinned by digest and listed in the CSV's relatedImages", name, v)
		}
	}
}
