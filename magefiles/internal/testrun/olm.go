package testrun

import (
	"path/filepath"

	"github.com/openshift/aws-efs-csi/magefiles/internal/sysdeps"
)

// The OLM suite: operator-lifecycle-manager on the local cluster (tag "cluster") installing a minimal operator
// from a catalog, which proves OLM's machinery apart from our bundle; the stack suite then installs ours through
// it. Its TestMain builds OLM and opm into the tool cache.
const olmSuitePackage = "./test/e2e/olm"

// OLMNeeds is what the image of OLM's commands needs from Debian: the bundle unpack Job runs /bin/cp in it, and
// busybox-static is that cp (as OLM's own image has distroless busybox).
var OLMNeeds = []sysdeps.Requirement{{Package: "busybox-static", File: "/bin/busybox"}}

func olmSuite(goTestFlags []string) Suite {
	argv := append([]string{"go", "test", "-race", "-tags", "cluster", "-timeout", "40m"}, goTestFlags...)
	return Suite{
		Name:     "cluster " + clusterSuiteDir + "/" + filepath.Clean(olmSuitePackage),
		Dir:      clusterSuiteDir,
		Argv:     append(argv, olmSuitePackage),
		Env:      []string{"CGO_ENABLED=1"},
		Requires: append(append(append([]sysdeps.Requirement{}, raceNeeds...), ClusterNeeds...), OLMNeeds...),
	}
}
