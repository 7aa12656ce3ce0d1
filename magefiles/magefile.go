//go:build mage

// Build, test and verify the AWS EFS CSI stack for OpenShift. Every target is a thin wrapper over a tested
// package under magefiles/pkg; run them from the repository root as `go tool mage <target>`.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/magefile/mage/mg"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/gobuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/harness"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/konflux"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/verify"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheels"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"

	//mage:import wheels
	_ "github.com/openshift/aws-efs-csi/magefiles/pkg/wheeltargets"
	//mage:import catalog
	_ "github.com/openshift/aws-efs-csi/magefiles/pkg/catalogtargets"
)

// Default is what a bare `go tool mage` runs.
var Default = All

// All runs the main job: everything a release engineer builds: Build, then Bundle. Images are not part of it:
// their bases come from registries (see docs/images.md); without their digests Bundle pins what it can and
// prints which images are not pinned (docs/release.md).
func All(ctx context.Context) {
	mg.CtxDeps(ctx, Build)
	mg.CtxDeps(ctx, Bundle)
}

// Build cross-compiles aws-efs-csi-driver and aws-efs-csi-driver-operator into _output/bin/<os>_<arch>/.
// By default binaries are static (CGO_ENABLED=0), for local development. FIPS=true builds what the images ship
// (each Containerfile's builder stage sets it): cgo on, the strictfipsruntime tag, dynamically linked against the C
// library, the toolchain's own GOFLAGS, GOEXPERIMENT and GOFIPS140 kept; the crypto is OpenSSL with Red Hat's Go
// (strictfipsruntime added to its GOEXPERIMENT) and Go's FIPS 140 module v1.0.0 with upstream Go; each binary is
// checked against openshift/check-payload's rules before it is kept (docs/release.md). FIPS=true builds only for
// the host platform unless CC names a cross-compiler.
// Either way binaries are built with -trimpath and no build ID, so one commit and toolchain give byte-identical
// files; each is stamped with its module's version (tag driver/vX.Y.Z or operator/vX.Y.Z at HEAD, else the module's
// VERSION file), the commit and a dirty flag, which --version prints; unchanged binaries are not recompiled.
// Environment: PLATFORMS=os/arch[,os/arch...] picks the platforms (default linux/amd64 and linux/arm64, where EFS
// runs; linux/ppc64le and linux/s390x on request); PROGRAMS=<binary>[,...] builds only those programs (an image's
// builder stage compiles only its own); BUILD_JOBS=N bounds the parallel compiles (default the number of CPUs);
// FIPS=true|false (default false).
func Build(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	platforms, err := platform.Parse(os.Getenv("PLATFORMS"))
	if err != nil {
		return err
	}
	jobs, err := gobuild.ParseJobs(os.Getenv("BUILD_JOBS"), runtime.NumCPU())
	if err != nil {
		return err
	}
	programs, err := gobuild.SelectPrograms(os.Getenv("PROGRAMS"))
	if err != nil {
		return err
	}
	mode, err := gobuild.ParseMode(os.Getenv("FIPS"))
	if err != nil {
		return err
	}
	stamps := map[string]stamp.Stamp{}
	for _, p := range programs {
		if stamps[p.Module], err = stamp.Resolve(ctx, root, p.Module); err != nil {
			return err
		}
	}
	_, err = gobuild.Build(ctx, gobuild.Options{
		Root:      root,
		OutDir:    filepath.Join(root, "_output", "bin"),
		Programs:  programs,
		Platforms: platforms,
		Stamps:    stamps,
		Jobs:      jobs,
		Progress:  os.Stdout,
		Mode:      mode,
	})
	return err
}

// Test runs every test suite: go test with the race detector in each Go module (the test harness's own module
// included), the efs-utils pytest suite, then the suites on the local cluster (a real single-node Kubernetes
// cluster; root only; docs/development.md): the cluster itself, OLM, and the stack (our operator installed from its
// bundle, directly and through OLM). It first installs the system packages the suites need when it runs as root on
// Debian (apt-get); anywhere else it stops and prints the exact apt-get command. Every suite runs even after a
// failure, and the last line counts the suites that passed and failed. The suites are run by the test harness, a Go
// module of its own (testharness/, `go run ./testharness/cmd/testharness test`; `... plan` lists the suites without
// running them), built and run as a subprocess so that the builds never compile it. Environment: GOTEST_FLAGS adds
// flags to every go test run, e.g. GOTEST_FLAGS="-run TestSanity -v" or GOTEST_FLAGS=-count=1.
func Test(ctx context.Context) error {
	return runHarness(ctx, "test")
}

// Cluster starts and stops a real single-node Kubernetes cluster on this machine (docs/development.md). Its
// targets run the test harness (testharness/cmd/testharness cluster ...) as a subprocess.
type Cluster mg.Namespace

// Up starts a single-node Kubernetes cluster in _output/cluster/ and leaves it running: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and a kubelet (Kubernetes built once into the tool cache, minutes when
// cold), with a private containerd, runc and CNI bridge network, all on loopback, and the project's images (see
// cluster:images) loaded into its containerd. It prints the kubeconfig, a kubectl command and the image
// references. One local cluster runs on a machine at a time; it needs root and installs its Debian packages
// (containerd, runc, containernetworking-plugins, mmdebstrap) when it can. Environment: AWS_EFS_CSI_TOOLS_DIR (the
// tool cache, default ${XDG_CACHE_HOME:-$HOME/.cache}/aws-efs-csi/tools).
func (Cluster) Up(ctx context.Context) error {
	return runHarness(ctx, "cluster", "up")
}

// Images builds the project's images for the local cluster into _output/cluster-images/ and prints the variable
// that points the cluster tests at them: the release's aws-efs-utils-base, aws-efs-csi-driver and
// aws-efs-csi-driver-operator, assembled by the images target's code for linux/amd64 on a Debian root file
// system standing in for RHEL 9 (mmdebstrap, built once into the tool cache), and aws-efs-csi-driver-for-cluster,
// the driver image plus one layer replacing mount.nfs4 with the NFS stand-in. Needs root. See docs/images.md.
func (Cluster) Images(ctx context.Context) error {
	return runHarness(ctx, "cluster", "images")
}

// Stack prepares the stack suite for running by hand: the project's images for the cluster, the sidecar and
// stand-in images, the bundle pinned to them, its bundle image and the catalog holding it, in
// _output/e2e/stack/ (what `go tool mage test` prepares), and prints the exports the suite reads. Then, as root:
// cd testharness && go test -tags cluster -v ./suites/stack/ (docs/development.md, Stack suite).
func (Cluster) Stack(ctx context.Context) error {
	return runHarness(ctx, "cluster", "stack")
}

// Down stops the cluster that cluster:up started and removes everything it made (processes, mounts, cgroups,
// network devices, CNI state, containerd shims, _output/cluster/).
func (Cluster) Down(ctx context.Context) error {
	return runHarness(ctx, "cluster", "down")
}

// runHarness runs the test harness command with args at the repository root (package harness).
func runHarness(ctx context.Context, args ...string) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	return harness.Run(ctx, root, args, os.Stdout, os.Stderr)
}

// Verify checks gofmt, go vet, that go mod tidy and go work sync leave no diff, and names every offending file.
// It never edits the tree: files that go work sync touches are put back after the comparison.
func Verify(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	return verify.Run(ctx, root, verify.Checks(), os.Stdout)
}

// Konflux checks, offline, every Konflux/ART release rule that a file of this repository decides (the PipelineRuns of
// .tekton/ and their pinned Pipelines, triggers, prefetch inputs, the base-to-driver nudge, the labels Red Hat's
// release policy requires; `go tool mage test` runs the same checks), then prints in one list what this machine
// cannot produce (the entitled RPM lock, first push digests) and what no offline check can decide. It fails while
// the first list is not empty: a green run means a hermetic Konflux build has what it needs. See ci/README.md.
func Konflux() error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	runs, err := konflux.Load(filepath.Join(root, konflux.Dir))
	if err != nil {
		return err
	}
	if problems := konflux.Check(root, runs); len(problems) > 0 {
		return fmt.Errorf("%s does not pass the offline checks:\n  - %s", konflux.Dir, strings.Join(problems, "\n  - "))
	}
	fmt.Printf("konflux: %d PipelineRuns pass every offline check\n", len(runs))
	pending := konflux.Pending(root, runs)
	fmt.Println("konflux: not checked here (needs Konflux, quay.io or entitlements):")
	for _, p := range pending {
		fmt.Println("  - [to do] " + p)
	}
	for _, p := range konflux.NotOffline {
		fmt.Println("  - [online only] " + p)
	}
	if len(pending) > 0 {
		return fmt.Errorf("konflux: %d items a hermetic build needs are not in the repository yet (the [to do] lines)", len(pending))
	}
	return nil
}

// Wheels downloads the Python distributions pinned in requirements.txt.ocp into _output/wheels/ with pip download
// --require-hashes --no-deps: a pure-Python wheel when one is pinned, else the source distribution (botocore's
// pinned hash is its sdist's, as OpenShift's aws-efs-utils installs it); pip checks every file against its pinned
// sha256. Every requirement must be name==version with --hash=sha256: lines; anything else fails naming the line
// before pip runs. When _output/wheels/ already holds every pinned file, pip finds them there without the network.
// Environment: WHEELS_INDEX_URL=<PEP 503 simple index> (default https://pypi.org/simple);
// WHEELS_REQUIREMENTS=<file> (default requirements.txt.ocp at the repository root); WHEELS_PYTHON=<interpreter
// with pip> (default /usr/bin/python3).
func Wheels(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	return wheels.ReadEnv(root, os.Getenv).Download(ctx, wheels.Pip{Python: wheels.FindPython(os.Getenv)}, os.Stdout)
}

// Images assembles aws-efs-utils-base, aws-efs-csi-driver and aws-efs-csi-driver-operator for every platform
// into one OCI layout per image under _output/images/ (and _output/images/digests.json), and pushes them when
// REGISTRY is set. It runs build and wheels first; pip wheel builds the pinned sdist (botocore) into a wheel with the
// host's python3, setuptools and wheel, offline and without build isolation, checking the hashes again, once per
// requirements file (_output/wheels/built/<sha256 of the file>/; WHEELS_PYTHON names another interpreter), and pip
// install --target installs it for the base's Python. Layers are reproducible (sorted, root-owned, dated
// SOURCE_DATE_EPOCH or the commit time), so the same inputs give the same digests; unchanged layers and images
// are not rebuilt, rewritten or pushed again. See docs/images.md.
// Environment: AWS_EFS_UTILS_BASE_FROM, AWS_EFS_CSI_DRIVER_FROM, AWS_EFS_CSI_DRIVER_OPERATOR_FROM=<registry
// reference | oci:<layout dir>[:<ref name>]> (the bases; defaults in docs/images.md; the efs-utils base must
// provide python3 >= 3.9, stunnel and mount.nfs4); REGISTRY=host[:port][/namespace]; IMAGE_TAG (default each
// module's version); AWS_EFS_CSI_DRIVER_FROM=containerfile builds the driver on the aws-efs-utils-base digest
// its Containerfile pins (Konflux's base); REGISTRY_INSECURE=true allows plain HTTP (loopback registries always may); RELEASE (label,
// default the short commit); SOURCE_DATE_EPOCH; IMAGE_JOBS (default the CPU count); PLATFORMS as for build.
func Images(ctx context.Context) error {
	mg.CtxDeps(ctx, Build, Wheels)
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	v, err := versions.Load(root)
	if err != nil {
		return err
	}
	specs := imagebuild.DefaultSpecs(v)
	settings, platforms, err := imagebuild.ReadEnv(ctx, root, os.Getenv, specs)
	if err != nil {
		return err
	}
	if settings.From[imagebuild.Driver] == "containerfile" {
		// The driver's base as Konflux builds it, read from its one source: the driver Containerfile's FROM.
		if settings.From[imagebuild.Driver], err = konflux.DriverBase(root); err != nil {
			return err
		}
	}
	pip := wheels.Pip{Python: wheels.FindPython(os.Getenv), SourceDateEpoch: settings.MTime.Unix()}
	built, err := wheels.ReadEnv(root, os.Getenv).Build(ctx, pip)
	if err != nil {
		return err
	}
	stamps := map[string]stamp.Stamp{}
	for _, module := range []string{"driver", "operator"} {
		if stamps[module], err = stamp.Resolve(ctx, root, module); err != nil {
			return err
		}
	}
	_, err = imagebuild.Run(ctx, imagebuild.Options{
		OutDir: filepath.Join(root, "_output", "images"), BinDir: filepath.Join(root, "_output", "bin"),
		EFSUtilsDir: filepath.Join(root, "efs-utils"), Wheels: built, Pip: pip,
		Specs: settings.WithBases(specs), Platforms: platforms, Stamps: stamps,
		Release: settings.Release, MTime: settings.MTime, Registry: settings.Registry, Tag: settings.Tag,
		Insecure: settings.Insecure, Jobs: settings.Jobs, Progress: os.Stdout,
	})
	return err
}

// Bundle renders, validates and packages the operator's OLM bundle (registry+v1) into _output/bundle/.
// It renders the bundle for the operator module's version into _output/bundle/{manifests,metadata}, validates it with github.com/operator-framework/api's validators and the
// OpenShift checks (any error fails, warnings are printed), and assembles the bundle image FROM scratch into
// _output/bundle-image/, pushed as $REGISTRY/aws-efs-csi-driver-operator-bundle:<tag> when REGISTRY is set. Each
// image of operator/manifests/images.yaml is pinned by digest from BUNDLE_IMAGES, else from a pushed image in
// _output/images/digests.json (`REGISTRY=... go tool mage images`); an image pinned by neither gets its
// development tag and a warning, and fails the target when REGISTRY is set or BUNDLE_REQUIRE_DIGESTS=true.
// Environment: BUNDLE_IMAGES=<file> (lines PLACEHOLDER=<repository>@sha256:<digest>); BUNDLE_REQUIRE_DIGESTS;
// REGISTRY, IMAGE_TAG, REGISTRY_INSECURE, SOURCE_DATE_EPOCH, PLATFORMS as for images. See docs/release.md.
func Bundle(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	opts, err := bundle.OptionsFromEnv(ctx, root, os.Getenv)
	if err != nil {
		return err
	}
	_, err = bundle.Run(ctx, opts)
	return err
}

// Catalog writes a file-based catalog holding the new bundle, for a custom CatalogSource, into _output/catalog/.
// It runs Bundle, then adds the bundle (with operator-registry's declcfg) to its package
// (operator/manifests/package.yaml): olm.package, an olm.channel entry that replaces the channel head and carries
// the CSV's skipRange, olm.bundle. The catalog is _output/catalog/, or the existing catalog directory
// CATALOG_DIR; one migrate level (CATALOG_MIGRATE_LEVEL, default bundle-object-to-csv-metadata) applies to every
// bundle, and the result is validated as `opm validate` does, and for a CSV in two packages (which OLM cannot
// resolve from), before it is written. With CATALOG_BASE (an opm image: registry reference or oci:<layout dir>),
// or REGISTRY (base OPERATOR_REGISTRY_IMAGE of images/versions.conf), it assembles the catalog image into
// _output/catalog-image/ (configs under /configs, `opm serve`)
// and pushes it as $REGISTRY/aws-efs-csi-driver-operator-catalog:<tag>; without either it says the image was not
// built. Environment: CATALOG_DIR, CATALOG_MIGRATE_LEVEL, CATALOG_BASE, CATALOG_BUNDLE_IMAGE=<repository>@sha256:
// <digest> (the bundle's pull spec, default the pushed bundle); the bundle's and images' variables. See
// docs/release.md.
func Catalog(ctx context.Context) error {
	mg.CtxDeps(ctx, Bundle)
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	opts, err := catalog.OptionsFromEnv(ctx, root, os.Getenv, os.Stdout)
	if err != nil {
		return err
	}
	_, err = catalog.Run(ctx, opts)
	return err
}
