// Command stackimages writes the images of the stack suite and their pins into a directory (stack.PrepareDir);
// `go tool mage test` runs it, then renders the bundle with those pins into the same directory. The project's
// images come from the directory AWS_EFS_CSI_CLUSTER_IMAGES names (`go tool mage cluster:images`).
//
//	AWS_EFS_CSI_CLUSTER_IMAGES=DIR stackimages --dir DIR
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/stack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "stackimages: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "directory that receives images/<PLACEHOLDER>.tar and pins.txt (required)")
	flag.Parse()
	if *dir == "" {
		return errors.New("--dir is required: the stack suite's directory")
	}
	tools, err := cluster.ToolsDir(os.Getenv)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	images, err := stack.PrepareDir(ctx, *dir, tools, os.Getenv(localcluster.ImagesDirEnv), os.Stderr)
	if err != nil {
		return err
	}
	for _, im := range images {
		fmt.Printf("%s=%s\n", im.Placeholder, im.Ref)
	}
	return nil
}
