package localcluster

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// Sidecars are the upstream sidecars the operator deploys next to the driver that the Go module proxy serves,
// built from their own modules into the tool cache. (node-driver-registrar and livenessprobe are not served.)
var Sidecars = []cluster.Tool{
	{Name: "csi-provisioner", Module: "github.com/kubernetes-csi/external-provisioner/v5", Version: "v5.3.0",
		Package: "./cmd/csi-provisioner", VersionVar: "main.version"},
	{Name: "kube-rbac-proxy", Module: "github.com/brancz/kube-rbac-proxy", Version: "v0.19.1",
		Package: "./cmd/kube-rbac-proxy"},
}

// StandIn is a sidecar the Go module proxy does not serve, replaced by a minimal program of ours
// (driver/test/standins, built through the go.work workspace).
type StandIn struct {
	// Name is the sidecar it stands in for.
	Name string
	// Package is our program.
	Package string
}

// StandIns stand in for node-driver-registrar (the kubelet's plugin registration) and livenessprobe (/healthz
// calling CSI Probe).
var StandIns = []StandIn{
	{Name: "node-driver-registrar", Package: "github.com/openshift/aws-efs-csi/driver/test/standins/node-driver-registrar-standin"},
	{Name: "livenessprobe", Package: "github.com/openshift/aws-efs-csi/driver/test/standins/livenessprobe-standin"},
}

// SidecarImage is the image reference of a sidecar in the local cluster.
func SidecarImage(t cluster.Tool) string {
	return "localhost/aws-efs-csi-e2e/" + t.Name + ":" + t.Version
}

// StandInImage is the image reference of a stand-in in the local cluster; the name says it is a stand-in.
func StandInImage(s StandIn) string {
	return "localhost/aws-efs-csi-e2e/" + s.Name + "-standin:v1"
}

// LoadSidecars builds every sidecar (cached) and stand-in, packs each as a one-binary image and imports it into
// the cluster's containerd, so pods can run SidecarImage and StandInImage with imagePullPolicy IfNotPresent or
// Never.
func (c *Cluster) LoadSidecars(ctx context.Context, toolsDir string, log io.Writer) error {
	var archives []string
	for _, t := range Sidecars {
		bin, err := cluster.BuildTool(ctx, toolsDir, t, log)
		if err != nil {
			return err
		}
		archive, err := writeImage(bin, "/usr/bin/"+t.Name, SidecarImage(t), filepath.Join(c.state.Dir, t.Name+".tar"))
		if err != nil {
			return err
		}
		archives = append(archives, archive)
	}
	for _, s := range StandIns {
		archive, err := buildProgramImage(ctx, c.state.Dir, s.Package, s.Name+"-standin", "/usr/bin/"+s.Name, StandInImage(s), log)
		if err != nil {
			return err
		}
		archives = append(archives, archive)
	}
	for _, a := range archives {
		if err := importImage(ctx, c.state.ContainerdSocket, a); err != nil {
			return fmt.Errorf("loading %s: %w", a, err)
		}
	}
	return nil
}
