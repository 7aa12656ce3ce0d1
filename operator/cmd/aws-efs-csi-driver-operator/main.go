// Command aws-efs-csi-driver-operator installs and manages the Amazon EFS CSI driver on OpenShift.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"io"
	"os"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/openshift/aws-efs-csi/operator/pkg/config"
	"github.com/openshift/aws-efs-csi/operator/pkg/operator"
	opversion "github.com/openshift/aws-efs-csi/operator/pkg/version"
)

const componentName = "aws-efs-csi-driver-operator"

func main() {
	cmd := newRootCommand(os.Stdout)
	cmd.SetArgs(os.Args[1:])
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}

// newRootCommand builds the command tree; out receives --version output.
func newRootCommand(out io.Writer) *cobra.Command {
	var printVersion bool
	root := &cobra.Command{
		Use:          componentName,
		Short:        "OpenShift operator for the Amazon EFS CSI driver",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printVersion {
				_, err := fmt.Fprintln(out, componentName, opversion.Get())
				return err
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolVar(&printVersion, "version", false, "Print the operator version, commit and tree state, then exit.")
	// klog's flags (-v, --vmodule, ...) on every command: the CSV runs `start -v=2`.
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	root.PersistentFlags().AddGoFlagSet(klogFlags)
	root.AddCommand(newStartCommand())
	return root
}

// newStartCommand is library-go's controller command: leader election (Lease aws-efs-csi-driver-operator-lock),
// the metrics and health server, --terminate-on-files, then operator.Run.
func newStartCommand() *cobra.Command {
	v := opversion.Get()
	cmd := controllercmd.NewControllerCommandConfig(componentName, version.Info{GitVersion: v.Version, GitCommit: v.Commit}, start, clock.RealClock{}).
		NewCommandWithContext(context.Background())
	cmd.Use = "start"
	cmd.Short = "Start the operator"
	return cmd
}

// start reads the environment once and runs the operator.
func start(ctx context.Context, cc *controllercmd.ControllerContext) error {
	cfg := config.FromEnv(os.Getenv, cc.OperatorNamespace)
	fips, err := config.ReadFIPS(config.FIPSFile)
	if err != nil {
		return err
	}
	cfg.FIPSEnabled = fips
	missing := metrics.NewGauge(&metrics.GaugeOpts{
		Name:           "aws_efs_csi_driver_operator_clustercsidriver_missing",
		Help:           "1 while the ClusterCSIDriver efs.csi.aws.com does not exist and the driver is therefore not installed, else 0.",
		StabilityLevel: metrics.ALPHA,
	})
	if err := legacyregistry.Register(missing); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	return operator.Run(ctx, operator.Options{Config: cfg, KubeConfig: cc.KubeConfig, Recorder: cc.EventRecorder, Missing: missing})
}
