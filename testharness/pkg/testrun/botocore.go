package testrun

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/openshift/aws-efs-csi/operator/test/toolcache"
	"github.com/openshift/aws-efs-csi/testharness/pkg/sysdeps"
)

// NewerBotocore is Debian trixie's python3-botocore (pure Python), which the efs-utils suite puts on PYTHONPATH
// beside bookworm's 1.29: the web-identity fallback test (the OpenShift node pods' STS credentials) needs botocore
// 1.31 or later, which reads AWS_ENDPOINT_URL_STS and so talks to fakeaws. It works with bookworm's
// python3-dateutil, python3-jmespath and python3-urllib3. The sha256 is that of the file deb.debian.org served
// for this version (packages.debian.org lists trixie's python3-botocore as 1.37.9+repack-1).
var NewerBotocore = sysdeps.Deb{
	Package: "python3-botocore", Version: "1.37.9+repack-1", Arch: "all", Pool: "p/python-botocore",
	SHA256: "ca7193ec8ab83f071c18c872f3cbde43b968251342de919915a8f56b2253683b",
}

// BotocorePathEnv tells efs_utils/fallback_e2e_test.py where a newer botocore is; the tests run with it as well
// as with the system's.
const BotocorePathEnv = "EFS_UTILS_TEST_BOTOCORE_PATH"

// newerBotocore is the efs-utils suite's Prepare: it unpacks NewerBotocore into the tool cache (debs/) the first
// time and returns BotocorePathEnv naming its dist-packages.
func newerBotocore(ctx context.Context, out io.Writer) ([]string, error) {
	tools, err := toolcache.Dir(os.Getenv)
	if err != nil {
		return nil, err
	}
	mirror := os.Getenv(sysdeps.MirrorEnv)
	if mirror == "" {
		mirror = sysdeps.DefaultMirror
	}
	dir, err := sysdeps.Unpack(ctx, NewerBotocore, mirror, filepath.Join(tools, "debs"), out)
	if err != nil {
		return nil, err
	}
	return []string{BotocorePathEnv + "=" + filepath.Join(dir, "usr", "lib", "python3", "dist-packages")}, nil
}
