package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// bins are the control plane binaries, built once per test process; nil with -short.
var bins *cluster.Binaries

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		b, err := buildControlPlane()
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building the control plane: %v\n", err)
			os.Exit(1)
		}
		bins = &b
	}
	// library-go names the ClusterCSIDriver finalizers after OPERATOR_NAME (set in the CSV), else after the binary.
	os.Setenv("OPERATOR_NAME", "aws-efs-csi-driver-operator")
	code := m.Run()
	removeDriverBinaries()
	os.Exit(code)
}

func buildControlPlane() (cluster.Binaries, error) {
	tools, err := cluster.ToolsDir(os.Getenv)
	if err != nil {
		return cluster.Binaries{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	start := time.Now()
	b, err := cluster.Build(ctx, tools, os.Stderr)
	fmt.Fprintf(os.Stderr, "e2e: control plane ready after %s\n", time.Since(start).Round(time.Second))
	return b, err
}
