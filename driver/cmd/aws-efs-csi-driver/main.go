// Command aws-efs-csi-driver is the Amazon EFS CSI driver: the controller, node or both CSI services in one binary.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/version"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run parses the flags and starts the driver; it returns the process exit code.
func run(args []string) int {
	fs := pflag.NewFlagSet("aws-efs-csi-driver", pflag.ContinueOnError)
	var opts Options
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	if opts.Version {
		fmt.Println("aws-efs-csi-driver", version.Get())
		return 0
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "aws-efs-csi-driver:", err)
		return 2
	}
	klog.InfoS("Starting aws-efs-csi-driver", "mode", opts.Mode, "build", version.Get().String())
	// The CSI services are wired here by the driver issues; until then the process has nothing to serve.
	fmt.Fprintln(os.Stderr, "aws-efs-csi-driver: no CSI services are built into this version yet")
	return 1
}
