package cluster

import (
	"context"
	"io"
	"path/filepath"
)

// e2eTestPackage is Kubernetes' end-to-end suite, whose test binary (e2e.test) runs the external storage tests
// against a CSI driver described by a test driver file (--storage.testdriver); ginkgoPackage is the CLI that runs
// a ginkgo test binary in parallel processes, at the version k8s.io/kubernetes requires.
const (
	e2eTestPackage = "k8s.io/kubernetes/test/e2e"
	ginkgoPackage  = "github.com/onsi/ginkgo/v2/ginkgo"
	// agnhostPackage is the program of the agnhost e2e test image: the subPath tests' pods run its mounttest.
	agnhostPackage = "k8s.io/kubernetes/test/images/agnhost"
)

// E2E is Kubernetes' e2e.test, the ginkgo CLI that runs it, and agnhost, for the image of that name.
type E2E struct{ Test, Ginkgo, Agnhost string }

// BuildE2E returns Kubernetes' e2e.test at KubernetesVersion and ginkgo's CLI from toolsDir/e2e-<KubernetesVersion>,
// and agnhost from toolsDir/agnhost-<KubernetesVersion>, building them first when they are not there: `go test -c`
// of k8s.io/kubernetes/test/e2e and `go build` of the others in the same throwaway module as the cluster's
// binaries (Build), so the packages they share come from the Go build cache. Cached and locked as Build's sets
// are; a cold build takes many minutes on two cores.
func BuildE2E(ctx context.Context, toolsDir string, log io.Writer) (E2E, error) {
	const test, ginkgo = "e2e.test", "ginkgo"
	dir, err := buildCached(ctx, toolsDir, "e2e-"+KubernetesVersion, []string{test, ginkgo}, "Kubernetes' e2e.test "+KubernetesVersion, log,
		func(ctx context.Context, work, out string, log io.Writer) error {
			if err := writeModule(ctx, work, log); err != nil {
				return err
			}
			if err := goCmd(ctx, work, log, "test", "-c", "-trimpath", "-ldflags", versionLDFlags(),
				"-o", filepath.Join(out, test), e2eTestPackage); err != nil {
				return err
			}
			return goCmd(ctx, work, log, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(out, ginkgo), ginkgoPackage)
		})
	if err != nil {
		return E2E{}, err
	}
	agnhostDir, err := buildCached(ctx, toolsDir, "agnhost-"+KubernetesVersion, []string{"agnhost"}, "agnhost "+KubernetesVersion, log,
		func(ctx context.Context, work, out string, log io.Writer) error {
			return buildSet(ctx, []struct{ name, pkg string }{{"agnhost", agnhostPackage}}, work, out, log)
		})
	if err != nil {
		return E2E{}, err
	}
	return E2E{Test: filepath.Join(dir, test), Ginkgo: filepath.Join(dir, ginkgo), Agnhost: filepath.Join(agnhostDir, "agnhost")}, nil
}
