package testrun

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/openshift/aws-efs-csi/operator/test/toolcache"
	"github.com/openshift/aws-efs-csi/testharness/pkg/clusterimages"
	"github.com/openshift/aws-efs-csi/testharness/pkg/sysdeps"
)

// ClusterNeeds is what the local single-node cluster (testharness/suites/localcluster) needs from Debian: a
// private containerd with runc, the CNI plugins of its pod network, ip(8) to remove its bridge, and iptables to
// check that it left no rule behind.
var ClusterNeeds = []sysdeps.Requirement{
	{Package: "containerd", File: "/usr/bin/containerd"},
	{Package: "runc", File: "/usr/sbin/runc"},
	{Package: "containernetworking-plugins", File: "/usr/lib/cni/bridge"},
	{Package: "iproute2", File: "/usr/sbin/ip"},
	{Package: "iptables", File: "/usr/sbin/iptables-save"},
}

// The cluster suite: its tests carry the build tag "cluster", so `go test ./...` in the testharness module runs only
// the package's unit tests and this suite, run as root, starts the cluster.
const (
	clusterSuiteDir     = "testharness"
	clusterSuitePackage = "./suites/localcluster"
)

// localClusterPackage is the command that starts and stops the local cluster for people.
const localClusterPackage = "github.com/openshift/aws-efs-csi/testharness/suites/localcluster/cmd/localcluster"

// ClusterDir is where `cluster:up` keeps the local cluster of the repository at root.
func ClusterDir(root string) string { return filepath.Join(root, "_output", "cluster") }

// LocalClusterArgv is the command line, run at the repository root, that brings the local cluster of ClusterDir
// up or down (verb "up" or "down").
func LocalClusterArgv(root, verb string) []string {
	return []string{"go", "run", localClusterPackage, verb, "--dir", ClusterDir(root)}
}

// ClusterImagesNeeds is what building the project's images for the cluster needs from Debian: mmdebstrap makes
// the root that stands in for RHEL 9, and the efs-utils bytecode is compiled by an interpreter of the root's
// Python (bookworm's 3.11, the suite of standinroot.Default).
var ClusterImagesNeeds = []sysdeps.Requirement{
	{Package: "mmdebstrap", Command: "mmdebstrap"},
	{Package: "python3.11", Command: "python3.11"},
	// the NFS client files the driver image for the cluster carries (clusterimages.NFSClientFiles)
	{Package: "libnfs-utils", File: "/usr/bin/nfs-ls"},
}

// ClusterImages builds the project's images for the local cluster of the repository at root
// (clusterimages.Build into clusterimages.Dir, the stand-in root cached in the tool cache) and returns their
// directory, the value of clusterimages.ImagesDirEnv. The driver image for the cluster is built when the mount.nfs4
// stand-in (clusterimages.MountStandInPackage) is in the tree, with the test CA of clusterimages.TestCADir.
func ClusterImages(ctx context.Context, root string, getenv func(string) string, out io.Writer) (string, error) {
	return buildClusterImages(ctx, root, clusterimages.Dir(root), nil, getenv, out)
}

// buildClusterImages is ClusterImages into outDir, with versions overriding modules' versions
// (clusterimages.Options.Versions; nil keeps the tree's): the release under test and the next one (prepareNext).
func buildClusterImages(ctx context.Context, root, outDir string, versions map[string]string, getenv func(string) string, out io.Writer) (string, error) {
	tools, err := toolcache.Dir(getenv)
	if err != nil {
		return "", err
	}
	opts := clusterimages.Options{Root: root, OutDir: outDir, ToolsDir: tools, Versions: versions, Log: out}
	rel := strings.TrimPrefix(clusterimages.MountStandInPackage, "github.com/openshift/aws-efs-csi/")
	if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
		opts.MountStandIn, opts.MountStandInEnv = clusterimages.MountStandInPackage, clusterimages.MountStandInEnv
		opts.NFSClient = clusterimages.NFSClientFiles
		opts.TestCADir = clusterimages.TestCADir(root)
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return "", err
	}
	if _, err := clusterimages.Build(ctx, opts); err != nil {
		return "", err
	}
	return opts.OutDir, nil
}

// clusterImages is the cluster suite's Prepare: it builds the images and points the tests at them.
func clusterImages(root string) func(ctx context.Context, out io.Writer) ([]string, error) {
	return func(ctx context.Context, out io.Writer) ([]string, error) {
		dir, err := ClusterImages(ctx, root, os.Getenv, out)
		if err != nil {
			return nil, err
		}
		return []string{clusterimages.ImagesDirEnv + "=" + dir}, nil
	}
}
