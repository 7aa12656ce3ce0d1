package cluster

import (
	"context"
	"io"
	"path/filepath"
)

// e2eTestPackage is Kubernetes' end-to-end suite, whose test binary (e2e.test) runs the external storage tests
// against a CSI driver described by a test driver file (--storage.testdriver).
const e2eTestPackage = "k8s.io/kubernetes/test/e2e"

// BuildE2ETest returns Kubernetes' e2e.test at KubernetesVersion from toolsDir/e2e-<KubernetesVersion>, building it
// first when it is not there: `go test -c` of k8s.io/kubernetes/test/e2e in the same throwaway module as the
// cluster's binaries (Build), so the packages they share come from the Go build cache. Cached and locked as Build's
// sets are; a cold build takes many minutes on two cores.
func BuildE2ETest(ctx context.Context, toolsDir string, log io.Writer) (string, error) {
	const name = "e2e.test"
	dir, err := buildCached(ctx, toolsDir, "e2e-"+KubernetesVersion, []string{name}, "Kubernetes' e2e.test "+KubernetesVersion, log,
		func(ctx context.Context, work, out string, log io.Writer) error {
			if err := writeModule(ctx, work, log); err != nil {
				return err
			}
			return goCmd(ctx, work, log, "test", "-c", "-trimpath", "-ldflags", versionLDFlags(),
				"-o", filepath.Join(out, name), e2eTestPackage)
		})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}
