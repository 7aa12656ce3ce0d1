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
// For each pinned version pip downloads the sdist and the pure-Python wheel for Python 3.9 (each when the index
// has one), refusing a file whose hash disagrees with the one the index advertises; each requirement is rewritten
// with one --hash=sha256: line per file; comments and other lines stay as they are. Versions are never changed.
// Environment: WHEELS_INDEX_URL=<PEP 503 simple index> (default https://pypi.org/simple);
// WHEELS_REQUIREMENTS=<file> (default requirements.txt.ocp at the repository root); WHEELS_PYTHON as for wheels.
func Lock(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	return wheels.ReadEnv(root, os.Getenv).LockFile(ctx, wheels.Pip{Python: wheels.FindPython(os.Getenv)}, os.Stdout)
}
