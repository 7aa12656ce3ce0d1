package testrun

import (
	"path/filepath"

	"github.com/openshift/aws-efs-csi/magefiles/internal/sysdeps"
)

// ClusterNeeds is what the local single-node cluster (operator/test/e2e/localcluster) needs from Debian: a
// private containerd with runc, the CNI plugins of its pod network, ip(8) to remove its bridge, and iptables to
// check that it left no rule behind.
var ClusterNeeds = []sysdeps.Requirement{
	{Package: "containerd", File: "/usr/bin/containerd"},
	{Package: "runc", File: "/usr/sbin/runc"},
	{Package: "containernetworking-plugins", File: "/usr/lib/cni/bridge"},
	{Package: "iproute2", File: "/usr/sbin/ip"},
	{Package: "iptables", File: "/usr/sbin/iptables-save"},
}

// The cluster suite: its tests carry the build tag "cluster", so `go test ./...` in the operator module runs only
// the package's unit tests and this suite, run as root, starts the cluster.
const (
	clusterSuiteDir     = "operator"
	clusterSuitePackage = "./test/e2e/localcluster"
)

// localClusterPackage is the command that starts and stops the local cluster for people.
const localClusterPackage = "github.com/openshift/aws-efs-csi/operator/test/e2e/localcluster/cmd/localcluster"

// ClusterDir is where `cluster:up` keeps the local cluster of the repository at root.
func ClusterDir(root string) string { return filepath.Join(root, "_output", "cluster") }

// LocalClusterArgv is the command line, run at the repository root, that brings the local cluster of ClusterDir
// up or down (verb "up" or "down").
func LocalClusterArgv(root, verb string) []string {
	return []string{"go", "run", localClusterPackage, verb, "--dir", ClusterDir(root)}
}
