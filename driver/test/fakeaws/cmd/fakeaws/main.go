// Command fakeaws serves the fake AWS APIs of package fakeaws (EFS, EC2 DescribeAvailabilityZones, STS, IMDS) on
// one loopback endpoint for scripted runs and non-Go clients such as botocore. It prints its URL as the first
// line of stdout and serves until SIGTERM or SIGINT.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fakeaws:", err)
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	var o Options
	fs := pflag.NewFlagSet("fakeaws", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: fakeaws [flags]\n\n"+
			"Serves fake AWS EFS (REST-JSON), EC2 DescribeAvailabilityZones and STS (query) and IMDSv2 on one\n"+
			"endpoint. Point clients at it with AWS_ENDPOINT_URL=<URL> (or a per-service endpoint) and any static\n"+
			"credentials; point IMDS clients at it with AWS_EC2_METADATA_SERVICE_ENDPOINT=<URL>. The URL is the\n"+
			"first line of stdout. Stop it with SIGTERM or SIGINT.\n\nFlags:\n%s", fs.FlagUsages())
	}
	fs.SetOutput(stderr)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return nil
		}
		return err
	}
	fo, err := o.Validate()
	if err != nil {
		return err
	}
	srv, err := fakeaws.StartAt(fo, o.Addr)
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := configure(srv, o); err != nil {
		return err
	}
	fmt.Println(srv.URL())
	for _, sn := range srv.Subnets() {
		klog.InfoS("Subnet", "zone", sn.AvailabilityZoneName, "zoneID", sn.AvailabilityZoneId,
			"subnetID", sn.SubnetId, "cidr", sn.CidrBlock)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	klog.InfoS("Stopping", "calls", srv.CallCounts())
	return nil
}

// configure applies the seed file, faults and roles of the options.
func configure(srv *fakeaws.Server, o Options) error {
	if o.SeedFile != "" {
		seed, err := fakeaws.LoadSeed(o.SeedFile)
		if err != nil {
			return fmt.Errorf("--seed-file: %w", err)
		}
		ids, err := srv.ApplySeed(seed)
		if err != nil {
			return fmt.Errorf("--seed-file %s: %w", o.SeedFile, err)
		}
		klog.InfoS("Seeded", "fileSystemIDs", ids)
	}
	for _, spec := range o.Faults {
		api, f, err := fakeaws.ParseFaultSpec(spec)
		if err != nil {
			return fmt.Errorf("--fault: %w", err)
		}
		srv.SetFault(api, f)
	}
	for _, spec := range o.Roles {
		arn, ext, err := parseRole(spec)
		if err != nil {
			return err
		}
		srv.AddRole(arn, ext)
	}
	return nil
}
