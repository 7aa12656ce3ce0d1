package testrun

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/openshift/aws-efs-csi/testharness/pkg/standinroot"
)

// TestEfsUtilsSuitePutsTheNewerBotocoreOnItsPath: the efs-utils suite prepares by unpacking NewerBotocore into
// the tool cache and hands the tests its dist-packages; with the package already unpacked there, no archive is
// asked (sysdeps' tests download and verify a .deb from an archive on loopback).
func TestEfsUtilsSuitePutsTheNewerBotocoreOnItsPath(t *testing.T) {
	suites, err := Plan(writeWorkspace(t, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pytest := suites[len(suites)-1]
	if pytest.Name != "pytest efs-utils" || pytest.Prepare == nil {
		t.Fatalf("last suite = %+v, want the efs-utils suite with a Prepare step", pytest)
	}
	tools := t.TempDir()
	t.Setenv(standinroot.ToolsDirEnv, tools)
	t.Setenv("DEBIAN_MIRROR", "http://127.0.0.1:1/debian") // nothing listens: the cache must answer
	site := filepath.Join(tools, "debs", NewerBotocore.Package+"_"+NewerBotocore.Version, "usr", "lib", "python3", "dist-packages")
	if err := os.MkdirAll(filepath.Join(site, "botocore"), 0o755); err != nil {
		t.Fatal(err)
	}
	env, err := pytest.Prepare(t.Context(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 1 || env[0] != BotocorePathEnv+"="+site {
		t.Fatalf("Prepare = %v, want %s=%s", env, BotocorePathEnv, site)
	}
}
