package localcluster

import (
	"context"
	"io"
)

// NetcheckImage is the network probe of ./netcheck (serve HTTP, GET a URL, authenticate to the API server as an
// in-cluster client), for tests that check what a pod on the pod network reaches.
const NetcheckImage = "localhost/aws-efs-csi-e2e/netcheck:v1"

// LoadNetcheck builds the network probe and imports its image into the cluster's containerd.
func (c *Cluster) LoadNetcheck(ctx context.Context, log io.Writer) error {
	archive, err := buildProgramImage(ctx, c.state.Dir, harnessPackage+"/netcheck", "netcheck", "/netcheck", NetcheckImage, log)
	if err != nil {
		return err
	}
	return importImage(ctx, c.state.ContainerdSocket, archive)
}
