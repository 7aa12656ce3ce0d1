// Command localcluster starts and stops the local single-node cluster of package localcluster for people
// (`go tool mage cluster:up` / `cluster:down` run it):
//
//	localcluster up --dir DIR     build Kubernetes (cached), start the cluster, load the project's images of
//	                              $AWS_EFS_CSI_CLUSTER_IMAGES when set, leave it running, print how to use it
//	localcluster down --dir DIR   stop the cluster started in DIR and remove everything it made
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 || (args[0] != "up" && args[0] != "down") {
		return errors.New("usage: localcluster up|down --dir DIR")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "directory of the cluster's data, configuration and logs (required)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--dir is required: the directory of the cluster")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if args[0] == "down" {
		found, err := localcluster.Down(abs, os.Stdout)
		if err != nil {
			return err
		}
		if !found {
			fmt.Printf("localcluster: no cluster in %s\n", abs)
			return nil
		}
		fmt.Printf("localcluster: stopped the cluster in %s and removed what it made\n", abs)
		return os.RemoveAll(abs)
	}
	return up(ctx, abs)
}

func up(ctx context.Context, dir string) error {
	tools, err := cluster.ToolsDir(os.Getenv)
	if err != nil {
		return err
	}
	start := time.Now()
	bins, err := cluster.Build(ctx, tools, os.Stdout)
	if err != nil {
		return err
	}
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, Binaries: bins, Detach: true, Log: os.Stdout})
	if err != nil {
		return err
	}
	if images := os.Getenv(localcluster.ImagesDirEnv); images != "" {
		imgs, err := c.LoadProjectImages(ctx, images, os.Stdout)
		if err != nil {
			_ = c.Stop()
			return err
		}
		fmt.Println("localcluster: the project's images (imagePullPolicy IfNotPresent or Never):")
		for _, img := range imgs.All() {
			fmt.Printf("  %s\n  %s\n", img.Reference, img.Pinned())
		}
	}
	fmt.Printf(`localcluster: up in %s; node %s is Ready. Logs: %s/<server>.log
  export KUBECONFIG=%s
  %s get nodes,pods -A
Stop it with: go tool mage cluster:down
`, time.Since(start).Round(time.Second), c.Node, dir, c.Kubeconfig, bins.Kubectl)
	return nil
}
