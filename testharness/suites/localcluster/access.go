package localcluster

import (
	"context"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// ImportImage loads an image archive (docker or OCI layout) into the cluster's containerd, where the kubelet finds
// it under the names the archive gives it; pods use it with imagePullPolicy IfNotPresent or Never.
func (c *Cluster) ImportImage(ctx context.Context, archive string) error {
	return importImage(ctx, c.state.ContainerdSocket, archive)
}

// ControlPlane is the cluster's control plane: its CA, audit log (AuditEvents) and CRD installer.
func (c *Cluster) ControlPlane() *cluster.Cluster { return c.control }
