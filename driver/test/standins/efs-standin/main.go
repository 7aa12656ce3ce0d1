// Command efs-standin stands in, on the host, for the AWS side of EFS in the local test cluster and the data-path
// tests: fakeaws over HTTPS with a test CA, seeded with a regional and a One Zone file system whose mount targets
// have loopback addresses; at each mount target address a real stunnel server (the test CA) in front of the NFS
// server stand-in (package nfsbackend), which serves each file system from a backing directory to the
// mount.nfs4 stand-in. It is a test-only stand-in, never shipped.
//
// It writes a ready document (JSON, see Ready) once everything serves, and on SIGTERM or SIGINT stops stunnel,
// unmounts what it mounted, and exits 0 leaving no process or mount behind.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/test/mounttarget"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "efs-standin:", err)
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	var o Options
	fs := pflag.NewFlagSet("efs-standin", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: efs-standin --dir DIR [flags]\n\n"+
			"Stands in for AWS EFS on this machine (test only): fakeaws over HTTPS, mount targets on loopback\n"+
			"addresses (stunnel with a test CA), and an NFS server stand-in serving backing directories to\n"+
			"mount-nfs4-standin. Writes the ready file (JSON) when serving; stop it with SIGTERM.\n\nFlags:\n%s", fs.FlagUsages())
	}
	o.AddFlags(fs)
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlag(klogFlags.Lookup("v")) // --v=4 logs every request the backend serves
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return nil
		}
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if o.InitCA {
		a, err := mounttarget.LoadOrCreateAuthority(o.CADir)
		if err != nil {
			return err
		}
		fmt.Println(a.CAFile)
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	env, err := start(o)
	if err != nil {
		return err
	}
	klog.InfoS("Serving", "readyFile", o.ReadyFile, "awsEndpoint", env.ready.AWSEndpoint)
	<-ctx.Done()
	klog.InfoS("Stopping", "calls", env.aws.CallCounts(), "mounts", env.backend.Mounts())
	return env.close()
}
