// Command aws-efs-csi-driver-operator installs and manages the Amazon EFS CSI driver on OpenShift.
package main

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	configclient "github.com/openshift/client-go/config/clientset/versioned"
	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	buildversion "github.com/openshift/aws-efs-csi/driver/pkg/version"
	"github.com/openshift/aws-efs-csi/operator/pkg/config"
	"github.com/openshift/aws-efs-csi/operator/pkg/operator"
	"github.com/openshift/aws-efs-csi/operator/pkg/tlsprofile"
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
				_, err := fmt.Fprintln(out, componentName, buildversion.Get())
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
// the metrics and health server, --terminate-on-files, then operator.Run. Before it runs, the metrics and health
// server is given the cluster's TLS profile (pkg/tlsprofile).
func newStartCommand() *cobra.Command {
	v := buildversion.Get()
	tls := &tlsState{}
	cmd := controllercmd.NewControllerCommandConfig(componentName, version.Info{GitVersion: v.Version, GitCommit: v.Commit}, tls.start, clock.RealClock{}).
		NewCommandWithContext(context.Background())
	cmd.Use = "start"
	cmd.Short = "Start the operator"
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return tls.apply(cmd) }
	return cmd
}

// tlsState carries the TLS profile the serving endpoint was configured with from the pre-run step to start.
type tlsState struct {
	client  configclient.Interface
	profile tlsprofile.Profile
}

// apply resolves the cluster's TLS profile and points --config at a copy of the given configuration with it. Outside
// a cluster (no kubeconfig, no in-cluster configuration) the configuration is used as given.
func (s *tlsState) apply(cmd *cobra.Command) error {
	kubeconfig, _ := cmd.Flags().GetString("kubeconfig")
	var restCfg *rest.Config
	var err error
	if kubeconfig != "" {
		restCfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		restCfg, err = rest.InClusterConfig()
	}
	if err != nil {
		klog.InfoS("No cluster to read the TLS profile from; serving with the configuration as given", "reason", err.Error())
		return nil
	}
	client, err := configclient.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	apiServer, err := tlsprofile.ReadAPIServer(ctx, client)
	if err != nil {
		return err
	}
	profile := tlsprofile.Resolve(apiServer)
	base, _ := cmd.Flags().GetString("config")
	dir, err := os.MkdirTemp("", componentName+"-tls-")
	if err != nil {
		return fmt.Errorf("the operator writes its TLS configuration to a temporary directory (mount an emptyDir at /tmp): %w", err)
	}
	path, err := tlsprofile.WriteConfig(base, dir, profile)
	if err != nil {
		return err
	}
	if err := cmd.Flags().Set("config", path); err != nil {
		return err
	}
	klog.InfoS("Serving metrics and health with the cluster's TLS profile", "minTLSVersion", profile.MinTLSVersion, "cipherSuites", len(profile.CipherSuites))
	s.client, s.profile = client, profile
	return nil
}

// start runs the operator, and ends it with an error when the cluster's TLS profile for the operator changes, so
// that the pod restarts and serves with the new profile.
func (s *tlsState) start(ctx context.Context, cc *controllercmd.ControllerContext) error {
	if s.client == nil {
		return start(ctx, cc)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var changed atomic.Bool
	go func() {
		tlsprofile.WaitForChange(runCtx, s.client, s.profile)
		if runCtx.Err() == nil {
			changed.Store(true)
			cancel()
		}
	}()
	err := start(runCtx, cc)
	if changed.Load() {
		return errors.New("the cluster's TLS profile changed: exiting to restart with it")
	}
	return err
}

// start reads the environment once and runs the operator.
func start(ctx context.Context, cc *controllercmd.ControllerContext) error {
	cfg := config.FromEnv(os.Getenv, cc.OperatorNamespace)
	fips, warn := config.ReadFIPS(config.FIPSFile)
	if warn != nil {
		klog.Warning(warn)
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
