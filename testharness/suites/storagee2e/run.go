package storagee2e

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// DriverDefinition is the test driver file (testdriver.yaml) e2e.test reads with --storage.testdriver.
//
//go:embed testdriver.yaml
var DriverDefinition []byte

// StorageClassName is the StorageClass the test driver file names (FromExistingClassName): the caller creates
// it, with provisioner efs.csi.aws.com, provisioningMode efs-ap and a file system of the cluster's.
const StorageClassName = "e2e-efs-ap"

// Options of one run of the external storage tests.
type Options struct {
	// E2ETest is Kubernetes' e2e.test and Ginkgo the ginkgo CLI that runs it (cluster.BuildE2E); Kubeconfig is
	// the cluster's.
	E2ETest, Ginkgo, Kubeconfig string
	// Procs is how many test processes run the tests in parallel (tests marked [Serial] do not run in parallel
	// and Skip leaves them out); zero means one.
	Procs int
	// Dir is a scratch directory for the driver file, the image list and the report.
	Dir string
	// Focus and Skip are ginkgo regular expressions over the tests' full names; empty means Focus and Skip.
	Focus, Skip string
	// Timeout bounds the whole run (ginkgo's --timeout); zero means an hour.
	Timeout time.Duration
	// Log receives e2e.test's output.
	Log io.Writer
}

// junitFile is the merged JUnit report ginkgo writes into Options.Dir.
const junitFile = "junit.xml"

// Run runs e2e.test's external storage tests for our driver against the cluster and reports what each selected
// test did. A failed test is in the report, not an error: the error is for a run that could not report.
func Run(ctx context.Context, o Options) (Report, error) {
	focus, skip := o.Focus, o.Skip
	if focus == "" {
		focus = Focus
	}
	if skip == "" {
		skip = Skip
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = time.Hour
	}
	driverFile := filepath.Join(o.Dir, "testdriver.yaml")
	if err := os.WriteFile(driverFile, DriverDefinition, 0o644); err != nil {
		return Report{}, err
	}
	listFile, err := writeRepoList(o.Dir)
	if err != nil {
		return Report{}, err
	}
	procs := max(o.Procs, 1)
	// ginkgo's CLI runs the precompiled e2e.test in procs processes and merges their reports; e2e.test's own
	// flags follow "--".
	cmd := exec.CommandContext(ctx, o.Ginkgo,
		"--procs="+strconv.Itoa(procs),
		"--focus="+focus,
		"--skip="+skip,
		"--timeout="+timeout.String(),
		"--no-color",
		"--output-dir="+o.Dir,
		"--junit-report="+junitFile,
		o.E2ETest, "--",
		"--kubeconfig="+o.Kubeconfig,
		"--storage.testdriver="+driverFile,
		"--report-dir="+o.Dir,
	)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "KUBE_TEST_REPO_LIST="+listFile)
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	runErr := cmd.Run()
	f, err := os.Open(filepath.Join(o.Dir, junitFile))
	if err != nil {
		return Report{}, errors.Join(fmt.Errorf("e2e.test wrote no report: %w", err), runErr)
	}
	defer f.Close()
	rep, err := ReadJUnit(f)
	if err != nil {
		return Report{}, errors.Join(err, runErr)
	}
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && len(rep.Failed) > 0) {
		// ginkgo exits 1 when a test failed, which the report says; any other end is the run's own failure.
		return rep, fmt.Errorf("e2e.test: %w", runErr)
	}
	return rep, nil
}
