package testrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/openshift/aws-efs-csi/magefiles/internal/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/internal/clusterimages"
	"github.com/openshift/aws-efs-csi/magefiles/internal/sysdeps"
)

// The stack suite: our operator installed from its bundle on the local cluster (tag "cluster"). It reads the
// directory StackDir names through stackDirEnv: the images (written by the stackimages command) and the bundle
// rendered with their digests, as a release renders it with BUNDLE_IMAGES.
const (
	stackSuitePackage = "./test/e2e/stack"
	stackImagesCmd    = "./test/e2e/stack/cmd/stackimages"
	stackDirEnv       = "AWS_EFS_CSI_STACK_DIR"
)

// StackDir is where the stack suite's images and bundle are prepared in the repository at root.
func StackDir(root string) string { return filepath.Join(root, "_output", "e2e", "stack") }

// stackSuite runs the stack package; its Prepare builds the project's images for the cluster (ClusterImages, done
// once for the cluster suite already), writes StackDir and points the suite at both.
func stackSuite(root string, goTestFlags []string) Suite {
	argv := append([]string{"go", "test", "-race", "-tags", "cluster", "-timeout", "40m"}, goTestFlags...)
	return Suite{
		Name:     "cluster " + clusterSuiteDir + "/" + filepath.Clean(stackSuitePackage),
		Dir:      clusterSuiteDir,
		Argv:     append(argv, stackSuitePackage),
		Env:      []string{"CGO_ENABLED=1"},
		Requires: append(append(append([]sysdeps.Requirement{}, raceNeeds...), ClusterNeeds...), ClusterImagesNeeds...),
		Prepare: func(ctx context.Context, out io.Writer) ([]string, error) {
			images, err := ClusterImages(ctx, root, os.Getenv, out)
			if err != nil {
				return nil, err
			}
			env := []string{clusterimages.ImagesDirEnv + "=" + images, stackDirEnv + "=" + StackDir(root)}
			if err := prepareStack(ctx, root, env, out); err != nil {
				return nil, err
			}
			return env, nil
		},
	}
}

// prepareStack writes the stack's images and their pins into StackDir (the stackimages command, run with env, which
// names the project's images), then renders
// the bundle there with those pins, as `BUNDLE_IMAGES=<pins> BUNDLE_REQUIRE_DIGESTS=true go tool mage bundle`
// would, never pushing.
func prepareStack(ctx context.Context, root string, env []string, out io.Writer) error {
	dir := StackDir(root)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "run", stackImagesCmd, "--dir", dir)
	cmd.Dir = filepath.Join(root, clusterSuiteDir)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("writing the stack's images: %w", err)
	}
	bundleEnv := map[string]string{bundle.EnvImages: filepath.Join(dir, "pins.txt"), bundle.EnvRequireDigests: "true", "REGISTRY": ""}
	opts, err := bundle.OptionsFromEnv(ctx, root, func(k string) string {
		if v, ok := bundleEnv[k]; ok {
			return v
		}
		return os.Getenv(k)
	})
	if err != nil {
		return err
	}
	opts.OutDir, opts.ImageOutDir, opts.Progress = filepath.Join(dir, "bundle"), filepath.Join(dir, "bundle-image"), out
	_, err = bundle.Run(ctx, opts)
	return err
}
