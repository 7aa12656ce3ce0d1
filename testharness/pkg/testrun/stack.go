package testrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/testharness/pkg/clusterimages"
)

// The stack suite: our operator installed from its bundle on the local cluster (tag "cluster"), directly and
// through OLM. It reads the directory StackDir names through stackDirEnv: the images (written by the stackimages
// command), the bundle rendered with their digests, as a release renders it with BUNDLE_IMAGES, its bundle image
// (an OCI layout) and the file-based catalog pinning that image by digest, as `go tool mage catalog` writes it.
const (
	stackSuitePackage = "./suites/stack"
	stackImagesCmd    = "./suites/stack/cmd/stackimages"
	stackDirEnv       = "AWS_EFS_CSI_STACK_DIR"
)

// stackBundleRepository names the bundle image in the stack's catalog and in the cluster's containerd (the
// stack package's repository); nothing is pulled from it.
const stackBundleRepository = "localhost/aws-efs-csi-e2e/" + bundle.ImageName

// StackDir is where the stack suite's images and bundle are prepared in the repository at root.
func StackDir(root string) string { return filepath.Join(root, "_output", "e2e", "stack") }

// stackSuite runs the stack package; its Prepare builds the project's images for the cluster (ClusterImages, done
// once for the cluster suite already), writes StackDir and points the suite at both.
func stackSuite(root string, goTestFlags []string) Suite {
	// -v: a cluster suite runs for minutes; each subtest shows as it starts and with its time as it ends.
	argv := append([]string{"go", "test", "-race", "-tags", "cluster", "-timeout", "40m", "-v"}, goTestFlags...)
	return Suite{
		Name:     "cluster " + clusterSuiteDir + "/" + filepath.Clean(stackSuitePackage),
		Dir:      clusterSuiteDir,
		Argv:     append(argv, stackSuitePackage),
		Env:      []string{"CGO_ENABLED=1"},
		Requires: StackNeeds,
		Prepare: func(ctx context.Context, out io.Writer) ([]string, error) {
			return PrepareStack(ctx, root, os.Getenv, out)
		},
	}
}

// PrepareStack builds the project's images for the cluster (ClusterImages) and writes StackDir from them, and
// returns the environment entries that point the stack suite at both and at the test CA the images carry: the stack suite's Prepare, and
// `cluster:stack` for running the suite by hand.
func PrepareStack(ctx context.Context, root string, getenv func(string) string, out io.Writer) ([]string, error) {
	images, err := ClusterImages(ctx, root, getenv, out)
	if err != nil {
		return nil, err
	}
	env := []string{clusterimages.ImagesDirEnv + "=" + images, stackDirEnv + "=" + StackDir(root),
		clusterimages.TestCADirEnv + "=" + clusterimages.TestCADir(root)}
	if err := prepareStack(ctx, root, images, out); err != nil {
		return nil, err
	}
	next, err := prepareNext(ctx, root, getenv, out)
	if err != nil {
		return nil, err
	}
	return append(env, nextImagesDirEnv+"="+next), nil
}

// nextImagesDirEnv names the project's images built as the next release (prepareNext).
const nextImagesDirEnv = "AWS_EFS_CSI_CLUSTER_IMAGES_NEXT"

// prepareNext makes release N+1 for the OLM upgrade test: the same tree built again with the patch version of the
// operator and the driver raised (clusterimages.Options.Versions) into NextImagesDir, its stack images and pins in
// StackDir/next, its bundle, and the catalog of N (StackDir/catalog) with N+1 added, in StackDir/next/catalog, as a
// release engineer adds the next bundle with CATALOG_DIR. It returns the images' directory.
func prepareNext(ctx context.Context, root string, getenv func(string) string, out io.Writer) (string, error) {
	versions := map[string]string{}
	for _, module := range []string{"operator", "driver"} {
		st, err := stamp.Resolve(ctx, root, module)
		if err != nil {
			return "", err
		}
		v, err := semver.Parse(strings.TrimPrefix(st.Version, "v"))
		if err != nil {
			return "", fmt.Errorf("%s version %q: %w", module, st.Version, err)
		}
		v.Patch++
		v.Pre, v.Build = nil, nil
		versions[module] = "v" + v.String()
	}
	images, err := buildClusterImages(ctx, root, clusterimages.Dir(root)+"-next", versions, getenv, out)
	if err != nil {
		return "", err
	}
	next := release{dir: filepath.Join(StackDir(root), "next"), images: images, operatorVersion: versions["operator"],
		baseCatalog: filepath.Join(StackDir(root), "catalog")}
	return images, writeRelease(ctx, root, next, out)
}

// StackNeeds is what preparing and running the stack suite needs from the system.
var StackNeeds = slices.Concat(raceNeeds, ClusterNeeds, ClusterImagesNeeds, OLMNeeds, RealNFSNeeds)

// prepareStack writes the release under test into StackDir (writeRelease, in a catalog of its own), from the project's
// images in images.
func prepareStack(ctx context.Context, root, images string, out io.Writer) error {
	dir := StackDir(root)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return writeRelease(ctx, root, release{dir: dir, images: images}, out)
}

// release is one release of the operator written for the stack suite.
type release struct {
	// dir receives the stack images' pins, the bundle, its image and the catalog.
	dir string
	// images is the directory of the project's images for the cluster (clusterimages.ImagesDirEnv).
	images string
	// operatorVersion overrides the bundle's version; empty keeps the tree's.
	operatorVersion string
	// baseCatalog is the catalog the bundle is added to (copied into dir/catalog first); empty starts a new one.
	baseCatalog string
}

// writeRelease writes r's stack images and their pins into r.dir (the stackimages command), then renders the bundle
// there with those pins, as `BUNDLE_IMAGES=<pins> BUNDLE_REQUIRE_DIGESTS=true go tool mage bundle` would, never
// pushing, and adds it to the catalog in r.dir/catalog (a copy of r.baseCatalog, or a new one), as `CATALOG_BUNDLE_IMAGE=<bundle by digest> go tool mage
// catalog` would (no catalog image: the suite serves the directory).
func writeRelease(ctx context.Context, root string, r release, out io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "run", stackImagesCmd, "--dir", r.dir)
	cmd.Dir = filepath.Join(root, clusterSuiteDir)
	cmd.Env = append(os.Environ(), clusterimages.ImagesDirEnv+"="+r.images)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("writing the stack images of %s: %w", r.dir, err)
	}
	bundleEnv := map[string]string{bundle.EnvImages: filepath.Join(r.dir, "pins.txt"), bundle.EnvRequireDigests: "true", "REGISTRY": ""}
	opts, err := bundle.OptionsFromEnv(ctx, root, func(k string) string {
		if v, ok := bundleEnv[k]; ok {
			return v
		}
		return os.Getenv(k)
	})
	if err != nil {
		return err
	}
	if r.operatorVersion != "" {
		opts.Stamp.Version = r.operatorVersion
	}
	opts.OutDir, opts.ImageOutDir, opts.Progress = filepath.Join(r.dir, "bundle"), filepath.Join(r.dir, "bundle-image"), out
	res, err := bundle.Run(ctx, opts)
	if err != nil {
		return err
	}
	if r.baseCatalog != "" {
		if err := os.CopyFS(filepath.Join(r.dir, "catalog"), os.DirFS(r.baseCatalog)); err != nil {
			return err
		}
	}
	_, err = catalog.Run(ctx, catalog.Options{
		BundleDir: opts.OutDir, BundleImage: stackBundleRepository + "@" + res.Image.Digest.String(),
		PackageFile: filepath.Join(root, "operator", "manifests", bundle.PackageFile), Dir: filepath.Join(r.dir, "catalog"),
		Fresh: r.baseCatalog == "", Progress: out,
	})
	return err
}
