package main

import (
	"context"
	"crypto/tls"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/driver"
	"github.com/openshift/aws-efs-csi/driver/pkg/events"
	"github.com/openshift/aws-efs-csi/driver/pkg/fsref"
	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/health"
	"github.com/openshift/aws-efs-csi/driver/pkg/metrics"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/rootdir"
	"github.com/openshift/aws-efs-csi/driver/pkg/version"
)

// serve wires the services of the chosen mode and serves them until ctx ends.
func serve(ctx context.Context, opts *Options, e env) error {
	m := metrics.New()
	services := driver.Services{}
	var checks []health.Check
	g, ctx := errgroup.WithContext(ctx)
	if opts.runsController() {
		ctrl, err := newController(opts, e)
		if err != nil {
			return err
		}
		services.Controller = ctrl
		checks = append(checks, health.Check{Name: "aws_credentials", Fn: ctrl.Ready})
		g.Go(func() error { initController(ctx, opts, e, ctrl, m); return nil })
		if opts.DeleteAccessPointRootDir && !opts.runsNode() {
			// Root-directory deletion runs mount.efs, which reads /etc/amazon/efs/efs-utils.conf: the image keeps
			// efs-utils' files in the static directory until a driver process sets them up.
			if _, err := startEFSUtils(ctx, g, opts, e); err != nil {
				return err
			}
		}
	}
	if opts.runsNode() {
		node, nodeChecks, err := startNode(ctx, g, opts, e)
		if err != nil {
			return err
		}
		services.Node = node
		checks = append(checks, nodeChecks...)
	}
	// Probe is always ready while the process serves; dependencies show in metrics and the log instead.
	services.Identity = driver.NewIdentity(version.Get().Version, services.Controller != nil)
	g.Go(func() error { (&health.Monitor{Checks: checks, Observer: m}).Run(ctx); return nil })
	srv := driver.NewServer(services, m)
	l, err := driver.Listen(opts.Endpoint)
	if err != nil {
		return err
	}
	g.Go(func() error { return driver.Serve(ctx, srv, l) })
	if opts.HTTPEndpoint != "" {
		ml, err := listenMetrics(opts.HTTPEndpoint)
		if err != nil {
			srv.Stop()
			return err
		}
		if opts.MetricsCertFile != "" {
			cert, err := tls.LoadX509KeyPair(opts.MetricsCertFile, opts.MetricsKeyFile)
			if err != nil {
				srv.Stop()
				return fmt.Errorf("--metrics-cert-file/--metrics-key-file: %w", err)
			}
			ml = tls.NewListener(ml, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		}
		g.Go(func() error { return m.Serve(ctx, ml) })
	}
	return g.Wait()
}

func newController(opts *Options, e env) (*driver.Controller, error) {
	tags, _ := provision.ParseTags(opts.Tags) // malformed entries are skipped; run logs them
	cfg := driver.ControllerConfig{
		Provisioner: provision.New(provision.Config{Tags: tags, GIDs: gidalloc.New(opts.GIDResyncPeriod, nil)}),
	}
	if kube := kubeClient(); kube != nil {
		cfg.Resolver = fsref.KubeResolver{Client: kube}
		cfg.Events = events.Poster{Client: kube}
	} else {
		klog.InfoS("fileSystemIdConfigRef and fileSystemIdSecretRef are unavailable outside a cluster")
	}
	if opts.DeleteAccessPointRootDir {
		cfg.RootDir = &rootdir.Deleter{Mounter: rootdir.ExecMounter{}, WorkDir: opts.AccessPointRootDirWorkDir}
	}
	return driver.NewController(cfg), nil
}

// initController resolves region and zone and builds the AWS clients, retrying until it works or ctx ends.
// Controller requests wait for it within their own deadline; a failed attempt is reported to the controller, whose
// requests then fail naming it, and the aws_credentials dependency is reported unhealthy, until an attempt works.
func initController(ctx context.Context, opts *Options, e env, ctrl *driver.Controller, m *metrics.Metrics) {
	retryUntilDone(ctx, "Initialising the controller's AWS access", func() error {
		err := initControllerOnce(ctx, opts, e, ctrl, m)
		if err != nil {
			ctrl.SetInitError(err)
		}
		return err
	})
}

// initControllerOnce is one attempt; its error names the step that failed.
func initControllerOnce(ctx context.Context, opts *Options, e env, ctrl *driver.Controller, m *metrics.Metrics) error {
	imdsClient, err := cloud.NewIMDSClient(ctx, "")
	if err != nil {
		return fmt.Errorf("instance metadata (IMDS) client: %w", err)
	}
	md, err := cloud.ResolveMetadata(ctx, cloud.MetadataInput{Region: opts.Region, Zone: opts.AvailabilityZone, EnvRegion: e.region}, imdsClient)
	if err != nil {
		return fmt.Errorf("region and availability zone: %w", err)
	}
	p, err := cloud.NewProvider(ctx, cloud.Options{Region: md.Region, Observer: m,
		Retry: cloud.RetryOptions{Adaptive: opts.AdaptiveRetryMode}})
	if err != nil {
		return fmt.Errorf("AWS clients for region %s: %w", md.Region, err)
	}
	ctrl.SetZoneID(md.ZoneID)
	ctrl.SetClouds(p)
	klog.InfoS("Controller ready to talk to AWS", "region", md.Region, "zone", md.Zone, "source", md.Source)
	return nil
}

// kubeClient returns the in-cluster client, or nil outside a cluster (the Node fallback and taint removal are off).
// The driver reads only Nodes, ConfigMaps and Secrets: the typed core/v1 client, not client-go's whole clientset,
// keeps every other API group's client out of the binary.
func kubeClient() *coreV1 {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		klog.V(2).InfoS("No in-cluster Kubernetes client", "reason", err.Error())
		return nil
	}
	c, err := corev1client.NewForConfig(cfg)
	if err != nil {
		klog.ErrorS(err, "Kubernetes client")
		return nil
	}
	return &coreV1{c}
}

// coreV1 is the typed core/v1 client with the clientset's CoreV1 method, which the code that reads through it uses.
type coreV1 struct{ client corev1client.CoreV1Interface }

// CoreV1 returns the core/v1 client.
func (c *coreV1) CoreV1() corev1client.CoreV1Interface { return c.client }
