package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// releaseModule is the module whose magefile every image's builder stage compiles (`go tool mage build`).
const releaseModule = "magefiles"

// HarnessOnly lists the import paths (each with everything under it) that the release tooling must not compile:
// the test harness module and what only the local cluster and its suites use (OLM, the kubelet's CRI, Kubernetes'
// own components, etcd's server). The magefile runs the harness as a subprocess (package harness) instead.
var HarnessOnly = []string{
	"github.com/openshift/aws-efs-csi/testharness",
	"github.com/openshift/aws-efs-csi/operator/test",
	"github.com/operator-framework/operator-lifecycle-manager",
	"k8s.io/cri-api",
	"k8s.io/kubernetes",
	"go.etcd.io/etcd/server",
}

// harnessBoundary fails when the magefile (build tag mage) or any non-test package of the magefiles module
// compiles a package of HarnessOnly, naming the package and what imports it. Test files may import what they like:
// no build compiles them.
func harnessBoundary(ctx context.Context, goBin, root string, mods []workspace.Module) error {
	if !slices.ContainsFunc(mods, func(m workspace.Module) bool { return m.Dir == releaseModule }) {
		return nil
	}
	out, err := toolchain.Output(ctx, filepath.Join(root, releaseModule), nil, goBin,
		"list", "-deps", "-tags", "mage", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	if err != nil {
		return err
	}
	bad := Crossings(out, HarnessOnly)
	if len(bad) > 0 {
		return fmt.Errorf("the %s module compiles test-harness packages (run the harness as a subprocess, see package harness):\n  %s",
			releaseModule, strings.Join(bad, "\n  "))
	}
	return nil
}

// Crossings reads `go list -deps -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}'` output and returns, sorted, one
// line per import of a package under one of forbidden: "<importer> imports <package>". Imports between two
// forbidden packages are left out, so each line is where the boundary is crossed.
func Crossings(goList string, forbidden []string) []string {
	under := func(pkg string) bool {
		return slices.ContainsFunc(forbidden, func(p string) bool { return pkg == p || strings.HasPrefix(pkg, p+"/") })
	}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(goList), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || under(fields[0]) {
			continue
		}
		for _, imp := range fields[1:] {
			if under(imp) {
				bad = append(bad, fields[0]+" imports "+imp)
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}
