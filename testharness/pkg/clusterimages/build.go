package clusterimages

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/gobuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/testharness/pkg/standinroot"
)

// ImagesDirEnv tells the cluster tests where Build wrote the images: the directory holding ManifestFile.
const ImagesDirEnv = "AWS_EFS_CSI_CLUSTER_IMAGES"

// ManifestFile lists the images, under the output directory.
const ManifestFile = "images.json"

// MountStandInPackage is the mount.nfs4 stand-in program (written with the EFS stand-in, driver/test/standins).
const MountStandInPackage = "github.com/openshift/aws-efs-csi/driver/test/standins/mount-nfs4-standin"

// EFSStandInPackage is the EFS stand-in (fakeaws, mount targets behind stunnel, the NFS server stand-in); its
// --init-ca makes the test CA that signs its mount targets' certificates.
const EFSStandInPackage = "github.com/openshift/aws-efs-csi/driver/test/standins/efs-standin"

// TestCADirEnv names the test CA directory (Options.TestCADir) for the suites that start efs-standin.
const TestCADirEnv = "AWS_EFS_CSI_TEST_CA_DIR"

// TestCADir is the test CA directory of the repository at root, shared by its builds of this release and the next.
func TestCADir(root string) string { return filepath.Join(root, "_output", "cluster-test-ca") }

// MountStandInEnv is the environment the driver image for the cluster needs with MountStandInPackage: efs-utils
// reads the NFS mount table that the stand-in's backend keeps (driver/test/standins/README.md) instead of
// /proc/mounts, where a bind mount does not show as nfs4, for mount.efs's "already mounted" and the watchdog's relay
// supervision. The table is on the node pod's hostPath /var/run/efs, so that it outlives a node plugin restart as
// kernel mounts do; in the controller's container the path is in its own root file system.
var MountStandInEnv = []string{"EFS_UTILS_PROC_MOUNTS=/var/run/efs/standin-nfs4-mounts"}

// Dir is where the images of the repository at root go.
func Dir(root string) string { return filepath.Join(root, "_output", "cluster-images") }

// Options says what Build builds and where.
type Options struct {
	// Root is the repository root.
	Root string
	// OutDir receives one OCI layout per image, the manifest and the layer caches (Dir).
	OutDir string
	// ToolsDir holds the stand-in root tarball (toolcache.Dir).
	ToolsDir string
	// RootSpec is the stand-in root file system to build; the zero value means standinroot.Default().
	RootSpec standinroot.Spec
	// MountStandIn is the import path of the mount.nfs4 stand-in; empty builds no driver image for the cluster.
	MountStandIn string
	// MountStandInEnv are environment entries the test layer's image adds (what the stand-in needs to know).
	MountStandInEnv []string
	// NFSClient are the host files of the NFS client the test layer adds with MountStandIn (NFSClientFiles).
	NFSClient []string
	// TestCADir, with MountStandIn, is the directory of efs-standin's test CA: made there with
	// `efs-standin --init-ca` when missing, reused otherwise; its certificate replaces the image's efs-utils.crt.
	// efs-standin must run with the same --ca-dir, and builds of the same tree as another release share it.
	TestCADir string
	// Versions, when set, replace the version of a module's stamp (module → vX.Y.Z): a second build of the same
	// tree as the next release, for upgrade tests. Its binaries go to OutDir/.bin instead of _output/bin.
	Versions map[string]string
	// Log receives progress lines.
	Log io.Writer
}

// Image is one entry of the manifest.
type Image struct {
	// Name is the image name (imagebuild.EFSUtilsBase, Driver, Operator, or DriverForCluster).
	Name string `json:"name"`
	// Layout is the OCI layout directory, relative to the manifest's directory.
	Layout string `json:"layout"`
	// Tag is the image's ref name in the layout; Digest its image index digest.
	Tag    string `json:"tag"`
	Digest string `json:"digest"`
}

// Manifest is ManifestFile's content.
type Manifest struct {
	Platform string  `json:"platform"`
	Images   []Image `json:"images"`
}

// Build makes the stand-in root (cached), compiles the driver and operator for linux/amd64, assembles the three
// release images on the root with imagebuild, adds the driver image for the cluster when a mount.nfs4 stand-in is
// given, and writes the manifest.
func Build(ctx context.Context, opts Options) (Manifest, error) {
	start := time.Now()
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	spec := opts.RootSpec
	if spec.Suite == "" {
		spec = standinroot.Default()
	}
	rootTar, err := standinroot.Build(ctx, spec, opts.ToolsDir, log)
	if err != nil {
		return Manifest{}, err
	}
	v, err := versions.Load(opts.Root)
	if err != nil {
		return Manifest{}, err
	}
	stamps := map[string]stamp.Stamp{}
	for _, p := range gobuild.Programs() {
		if stamps[p.Module], err = stamp.Resolve(ctx, opts.Root, p.Module); err != nil {
			return Manifest{}, err
		}
	}
	binDir := filepath.Join(opts.Root, "_output", "bin")
	for module, version := range opts.Versions {
		st := stamps[module]
		st.Version = version
		stamps[module] = st
		binDir = filepath.Join(opts.OutDir, ".bin")
	}
	if _, err := gobuild.Build(ctx, gobuild.Options{
		Root: opts.Root, OutDir: binDir, Programs: gobuild.Programs(), Platforms: []platform.Platform{Platform},
		Stamps: stamps, Jobs: 1, Progress: log,
	}); err != nil {
		return Manifest{}, err
	}
	mtime, err := imagebuild.CommitTime(ctx, opts.Root)
	if err != nil {
		return Manifest{}, err
	}
	results, err := imagebuild.Run(ctx, imagebuild.Options{
		OutDir: opts.OutDir, BinDir: binDir, EFSUtilsDir: filepath.Join(opts.Root, "efs-utils"),
		Specs: Specs(v, rootTar), Platforms: []platform.Platform{Platform}, Stamps: stamps,
		MTime: mtime, Jobs: 1, Progress: log,
	})
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{Platform: Platform.String()}
	var driver imagebuild.Result
	for _, r := range results {
		m.Images = append(m.Images, Image{Name: r.Name, Layout: r.Name, Tag: r.Tag, Digest: r.Digest.String()})
		if r.Name == imagebuild.Driver {
			driver = r
		}
	}
	if opts.MountStandIn == "" {
		fmt.Fprintf(log, "clusterimages: no mount.nfs4 stand-in given: the driver image for the cluster is not built\n")
		if err := os.RemoveAll(filepath.Join(opts.OutDir, DriverForCluster)); err != nil { // left by an earlier run
			return Manifest{}, err
		}
	} else {
		img, err := driverForCluster(ctx, opts, driver, mtime, log)
		if err != nil {
			return Manifest{}, err
		}
		m.Images = append(m.Images, img)
	}
	if err := writeManifest(opts.OutDir, m); err != nil {
		return Manifest{}, err
	}
	fmt.Fprintf(log, "clusterimages: %d images in %s (%s=%s) in %s\n", len(m.Images), opts.OutDir, ImagesDirEnv, opts.OutDir, time.Since(start).Round(100*time.Millisecond))
	return m, nil
}

// driverForCluster compiles the mount.nfs4 stand-in (static, through the go.work workspace) and writes the
// release driver image plus the stand-in layer as its own layout.
func driverForCluster(ctx context.Context, opts Options, driver imagebuild.Result, mtime time.Time, log io.Writer) (Image, error) {
	goBin, err := toolchain.Find("go", "compile the mount.nfs4 stand-in")
	if err != nil {
		return Image{}, err
	}
	bin := filepath.Join(opts.OutDir, ".standins", "mount.nfs4")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return Image{}, err
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, opts.MountStandIn)
	cmd.Dir = opts.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+Platform.OS, "GOARCH="+Platform.Arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return Image{}, fmt.Errorf("go build %s: %w\n%s", opts.MountStandIn, err, out)
	}
	tl := TestLayer{MountStandIn: bin, Env: opts.MountStandInEnv, NFSClient: opts.NFSClient}
	if opts.TestCADir != "" {
		if tl.CAFile, err = initTestCA(ctx, goBin, opts); err != nil {
			return Image{}, err
		}
		fmt.Fprintf(log, "clusterimages: test CA %s\n", tl.CAFile)
	}
	idx, err := layout.ImageIndexFromPath(driver.Layout)
	if err != nil {
		return Image{}, err
	}
	driverIdx, err := idx.ImageIndex(driver.Digest)
	if err != nil {
		return Image{}, err
	}
	img, err := driverIdx.Image(driver.Platforms[Platform.String()])
	if err != nil {
		return Image{}, err
	}
	cache := layer.NewCache(layer.Options{MTime: mtime, CacheDir: filepath.Join(opts.OutDir, ".cache", "layers")})
	img, err = WithTestLayer(img, tl, cache, mtime)
	if err != nil {
		return Image{}, fmt.Errorf("%s: %w", DriverForCluster, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Image{}, err
	}
	out := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	digest, err := out.Digest()
	if err != nil {
		return Image{}, err
	}
	dir := filepath.Join(opts.OutDir, DriverForCluster)
	if err := os.RemoveAll(dir); err != nil {
		return Image{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return Image{}, err
	}
	if err := p.AppendIndex(out, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": driver.Tag})); err != nil {
		return Image{}, err
	}
	fmt.Fprintf(log, "clusterimages: %s: %s plus the mount.nfs4 stand-in layer (with %d NFS client files), index %s\n", DriverForCluster, driver.Name, len(opts.NFSClient), digest)
	return Image{Name: DriverForCluster, Layout: DriverForCluster, Tag: driver.Tag, Digest: digest.String()}, nil
}

// initTestCA runs `efs-standin --init-ca` (built for this host) on opts.TestCADir and returns the path of the CA
// certificate it prints.
func initTestCA(ctx context.Context, goBin string, opts Options) (string, error) {
	bin := filepath.Join(opts.OutDir, ".standins", "efs-standin")
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, EFSStandInPackage)
	build.Dir = opts.Root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", EFSStandInPackage, err, out)
	}
	if err := os.MkdirAll(opts.TestCADir, 0o700); err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, bin, "--init-ca", "--ca-dir", opts.TestCADir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("efs-standin --init-ca --ca-dir %s: %w\n%s", opts.TestCADir, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+ManifestFile)
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ManifestFile))
}
