package sanity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

var report types.Report

var _ = ginkgo.ReportAfterSuite("collect", func(r types.Report) { report = r })

// TestSanityAllModeRealMounts: the driver in all mode creates access points in fakeaws and mounts them for real;
// mount.efs finds the mount target through its botocore fallback (DescribeMountTargets against fakeaws, the
// zone from fakeaws' instance metadata), since the EFS DNS name does not resolve here.
func TestSanityAllModeRealMounts(t *testing.T) {
	harness.RequireRoot(t)
	harness.InstallMountHelper(t)
	dir := t.TempDir()
	aws, err := fakeaws.Start(fakeaws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = aws.Close() }()
	fsID := aws.AddFileSystem(fakeaws.FileSystem{})
	ca, cert, key := harness.CA(t, dir, fsID)
	target := harness.StartMountTarget(t, dir, cert, key)
	aws.AddMountTarget(fsID, "us-east-1a", target.IP) // the instance's zone
	bin := harness.BuildDriver(t, dir)
	node := harness.NewNode(t, filepath.Join(dir, "node"), aws.URL(), ca)
	d := node.Start(t, bin, "all", "--vol-metrics-opt-in", "--volume-attach-limit=20")

	if err := os.MkdirAll(filepath.Join(dir, "sanity"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + node.Socket
	cfg.TargetPath = filepath.Join(dir, "sanity", "target")
	cfg.StagingPath = filepath.Join(dir, "sanity", "staging")
	cfg.TestVolumeParameters = map[string]string{"provisioningMode": "efs-ap", "fileSystemId": fsID, "directoryPerms": "700"}
	cfg.IDGen = harness.SanityIDs{FileSystemID: fsID}
	cfg.IdempotentCount = 2
	sc := sanity.GinkgoTest(&cfg)
	gomega.RegisterFailHandler(ginkgo.Fail)
	suite, rep := ginkgo.GinkgoConfiguration()
	ginkgo.RunSpecs(t, "EFS CSI sanity, all specs, real mounts", suite, rep)
	sc.Finalize()

	var passed, failed, skipped, node_ int
	for _, spec := range report.SpecReports {
		if spec.LeafNodeType != types.NodeTypeIt {
			continue
		}
		switch spec.State {
		case types.SpecStatePassed:
			passed++
			if len(spec.ContainerHierarchyTexts) > 0 && spec.ContainerHierarchyTexts[0] == "Node Service" {
				node_++
			}
		case types.SpecStateSkipped, types.SpecStatePending:
			skipped++
		default:
			failed++
		}
	}
	t.Logf("csi-sanity (all specs): %d passed (%d node specs), %d failed, %d skipped by the suite (capabilities the driver does not advertise)",
		passed, node_, failed, skipped)
	if failed != 0 || node_ == 0 {
		t.Fatalf("sanity: %d failed, %d node specs passed; want no failures and the node specs run", failed, node_)
	}
	if left := len(aws.AccessPoints(fsID)); left != 0 {
		t.Errorf("%d access points left after the suite", left)
	}
	if recs := node.Recorded(t); len(recs) == 0 {
		t.Error("no mount reached mount.nfs4: the node specs did not mount for real")
	}
	if left := harness.MountsUnder(filepath.Join(dir, "sanity")); len(left) != 0 {
		t.Errorf("mounts left after the suite: %v", left)
	}
	_ = d
}
