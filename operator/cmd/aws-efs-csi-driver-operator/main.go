// Command aws-efs-csi-driver-operator installs and manages the Amazon EFS CSI driver on OpenShift.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/openshift/aws-efs-csi/operator/pkg/version"
)

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
		Use:          "aws-efs-csi-driver-operator",
		Short:        "OpenShift operator for the Amazon EFS CSI driver",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printVersion {
				_, err := fmt.Fprintln(out, "aws-efs-csi-driver-operator", version.Get())
				return err
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolVar(&printVersion, "version", false, "Print the operator version, commit and tree state, then exit.")
	root.AddCommand(newStartCommand())
	return root
}

// newStartCommand is the operator's long-running entry point.
func newStartCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "start",
		Short: "Start the operator",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// The controllers are wired here by the operator issue.
			return fmt.Errorf("start: no controllers are built into this version yet")
		},
	}
}
