// Package workspacetest gives tests of the repository's own files (manifests, Containerfiles, PipelineRuns) the
// repository root; it is imported by test files only.
package workspacetest

import (
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// Root returns the directory holding go.work above the test's working directory (its package directory), failing
// the test when there is none.
func Root(t testing.TB) string {
	t.Helper()
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
