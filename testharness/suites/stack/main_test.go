//go:build cluster

package stack

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// DirEnv names the stack directory (PrepareDir's images and pins, and the bundle rendered with them) that
// `go tool mage test` prepares for this suite.
const DirEnv = "AWS_EFS_CSI_STACK_DIR"

var (
	// bins is the Kubernetes set, built once per test process; nil with -short.
	bins *cluster.Binaries
	// stackDir is the directory DirEnv names.
	stackDir string
	// e2e is Kubernetes' e2e.test at the cluster's version, ginkgo's CLI and agnhost, for the external storage
	// tests.
	e2e cluster.E2E
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		stackDir = os.Getenv(DirEnv)
		if stackDir == "" {
			fmt.Fprintf(os.Stderr, "stack: %s is not set: run the suite with `go tool mage test`, which writes the images and the bundle pinned to them and sets it\n", DirEnv)
			os.Exit(1)
		}
		tools, err := cluster.ToolsDir(os.Getenv)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
			var b cluster.Binaries
			b, err = cluster.Build(ctx, tools, os.Stderr)
			if err == nil {
				e2e, err = cluster.BuildE2E(ctx, tools, os.Stderr)
			}
			cancel()
			bins = &b
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "stack: building Kubernetes: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}
