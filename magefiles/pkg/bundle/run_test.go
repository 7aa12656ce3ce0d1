package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
)

func runOptions(t *testing.T, src Sources) Options {
	t.Helper()
	out := t.TempDir()
	return Options{
		Sources: src, OutDir: filepath.Join(out, "bundle"), ImageOutDir: filepath.Join(out, "bundle-image"),
		Stamp: stamp.Stamp{Version: "v5.0.1-202601020304", Commit: "0123456789abcdef0123456789abcdef01234567"},
		MTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Platforms: []platform.Platform{{OS: "linux", Arch: "amd64"}},
		DigestsFile: filepath.Join(out, "no-digests.json"), K8sVersion: k8sVersion(t),
	}
}

func TestRunWithoutDigestsWarnsAndBuildsADevelopmentBundle(t *testing.T) {
	opts := runOptions(t, copySources(t, nil))
	var log strings.Builder
	opts.Progress = &log
	res, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WARNING: 7 images have a placeholder digest",
		"DRIVER_IMAGE=registry.redhat.io/openshift4/ose-aws-efs-csi-driver-rhel9@" + PlaceholderDigest + " (first push digest not recorded",
		"TOOLS_IMAGE=registry.redhat.io/openshift4/ose-tools-rhel9@" + PlaceholderDigest + " (payload digest not recorded",
		"BUNDLE_IMAGES", "aws-efs-csi-driver-operator.v5.0.1-202601020304 written to"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, log.String())
		}
	}
	csv, err := os.ReadFile(filepath.Join(opts.OutDir, "manifests", CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: aws-efs-csi-driver-operator.v5.0.1-202601020304", "olm.skipRange: '>=4.9.0-0 <5.0.1-202601020304'",
		"  version: 5.0.1-202601020304", "value: 5.0.1-202601020304", "value: registry.redhat.io/openshift4/ose-tools-rhel9@" + PlaceholderDigest} {
		if !strings.Contains(string(csv), want) {
			t.Errorf("rendered CSV lacks %q", want)
		}
	}
	if res.Image.Digest.Hex == "" || res.Image.Reference != "" {
		t.Errorf("image result %+v: want a digest and no push", res.Image)
	}
	// Same inputs, same bundle image.
	again := opts
	again.ImageOutDir = filepath.Join(t.TempDir(), "again")
	res2, err := Run(t.Context(), again)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Image.Digest != res.Image.Digest {
		t.Errorf("bundle image digest %s, then %s: want the same", res.Image.Digest, res2.Image.Digest)
	}
}

func TestRunRequiringDigestsFailsAndKeepsThePreviousBundle(t *testing.T) {
	opts := runOptions(t, copySources(t, nil))
	if _, err := Run(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	opts.RequireDigests = true
	opts.Pins = map[string]string{"TOOLS_IMAGE": "quay.io/o/tools@" + digestA}
	_, err := Run(t.Context(), opts)
	if err == nil || !strings.Contains(err.Error(), "6 images have a placeholder digest") || !strings.Contains(err.Error(), "OPERATOR_IMAGE=") {
		t.Fatalf("error %v, want one listing the 6 images with a placeholder digest", err)
	}
	if _, err := os.Stat(filepath.Join(opts.OutDir, "manifests", CSVFile)); err != nil {
		t.Errorf("the previous bundle is gone: %v", err)
	}
	// A CSV the validators refuse leaves the previous bundle in place too.
	opts.RequireDigests, opts.Pins = false, nil
	opts.Sources = copySources(t, func(c string) string { return strings.Replace(c, "runAsNonRoot: true", "runAsNonRoot: false", 1) })
	if _, err := Run(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "runAsNonRoot must be true") {
		t.Fatalf("error %v, want the validator's message", err)
	}
	if _, err := os.Stat(filepath.Join(opts.OutDir, "manifests", CSVFile)); err != nil {
		t.Errorf("the previous bundle is gone: %v", err)
	}
}
