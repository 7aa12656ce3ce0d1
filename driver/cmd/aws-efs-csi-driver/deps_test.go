package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyPackages are packages the driver binary must not link (docs/performance.md, binary size): each carries
// tens of megabytes for one or two calls the driver makes another way.
var heavyPackages = map[string]string{
	"github.com/aws/aws-sdk-go-v2/service/ec2": "every EC2 operation, for DescribeAvailabilityZones (pkg/cloud/ec2query.go)",
	"k8s.io/client-go/kubernetes":              "every API group's client, for core/v1 Nodes, ConfigMaps and Secrets (typed core/v1 client)",
}

func TestBinaryDoesNotLinkHeavyPackages(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if why, ok := heavyPackages[p]; ok {
			t.Errorf("the driver links %s: %s", p, why)
		}
	}
}
