package testrun

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/openshift/aws-efs-csi/operator/test/toolcache"
)

// TestEfsUtilsSuitePutsTheNewerBotocoreOnItsPath: the efs-utils suite prepares by unpacking NewerBotocore into
// the tool cache and hands the tests its dist-packages; with the package already unpacked there, no archive is
// asked (sysdeps' tests download and verify a .deb from an archive on loopback).
func TestEfsUtilsSuitePutsTheNewerBotocoreOnItsPath(t *testing.T) {
	suites, err := Plan(writeWorkspace(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pytest Suite
	for _, s := range suites {
		if s.Name == "pytest efs-utils" {
			pytest = s
		}
	}
	if pytest.Prepare == nil {
		t.Fatalf("suites %+v: want the efs-utils suite with a Prepare step", suites)
	}
	tools := t.TempDir()
	t.Setenv(toolcache.DirEnv, tools)
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
