// Package wheeltargets holds the mage targets of the wheels namespace; magefile.go imports it with
// `mage:import wheels`, so `go tool mage wheels:lock` runs Lock.
package wheeltargets

import (
	"context"
	"os"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheels"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// Lock recomputes the sha256 hashes of every pinned requirement in requirements.txt.ocp from the index.
// It downloads every file the index lists for each pinned version (wheels and sdists), hashes it, refuses a file
// whose hash disagrees with the one the index advertises, and rewrites each requirement with one
// --hash=sha256: line per file; comments and other lines stay as they are. Versions are never changed.
// Environment: WHEELS_INDEX_URL=<PEP 503/691 simple index> (default https://pypi.org/simple);
// WHEELS_REQUIREMENTS=<file> (default requirements.txt.ocp at the repository root).
func Lock(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	return wheels.ReadEnv(root, os.Getenv).LockFile(ctx, wheels.NewClient(), os.Stdout)
}
