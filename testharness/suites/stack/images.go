package stack

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

// repository is where the stack's images are named; nothing is pulled from it (pods use IfNotPresent and the
// images are imported into the cluster's containerd before the operator starts).
const repository = "localhost/aws-efs-csi-e2e/"

// Image is one image of the stack: its archive and the digest reference the bundle pins for its placeholder.
type Image struct {
	// Placeholder is the CSV template's placeholder (operator/manifests/images.yaml), e.g. DRIVER_IMAGE.
	Placeholder string
	// Ref is <repository>@sha256:<manifest digest>, the name it has in containerd.
	Ref string
	// Archive is an OCI image layout archive that `ctr images import` loads under Ref; empty for the project's
	// images (localcluster.ProjectImages).
	Archive string
}

// Files of the stack directory (PrepareDir).
const (
	// PinsFile lists PLACEHOLDER=<reference> per line, the BUNDLE_IMAGES form.
	PinsFile = "pins.txt"
	// ImagesDir holds the image archives, <placeholder>.tar.
	ImagesDir = "images"
	// BundleDir holds the bundle rendered with PinsFile (manifests/, metadata/).
	BundleDir = "bundle"
	// BundleImageDir holds the bundle image of BundleDir as an OCI layout, BundleImageDir/BundleImageName.
	BundleImageDir  = "bundle-image"
	BundleImageName = "aws-efs-csi-driver-operator-bundle"
	// CatalogDir holds the file-based catalog of the bundle, which names the bundle image by digest in
	// BundleRepository.
	CatalogDir = "catalog"
)

// BundleRepository is where the catalog names the bundle image and where the OLM test loads it into containerd.
const BundleRepository = repository + BundleImageName

// PrepareDir writes the stack's images into dir/ImagesDir and the pins of every image of the CSV into
// dir/PinsFile. The operator, the driver (for the cluster: the release image plus the mount.nfs4 stand-in) and
// the tools image (the efs-utils base, which has the shell the init containers run) are the project's images of
// clusterImages (localcluster.ImagesDirEnv), loaded by the suite with LoadProjectImages and pinned by their
// digests; the upstream sidecars, built from their modules (cached in toolsDir), and our node-driver-registrar
// and livenessprobe stand-ins are written as archives here.
func PrepareDir(ctx context.Context, dir, toolsDir, clusterImages string, log io.Writer) ([]Image, error) {
	project, err := localcluster.ReadProjectImages(clusterImages)
	if err != nil {
		return nil, err
	}
	if project.Driver.Reference == "" {
		return nil, fmt.Errorf("%s has no driver image for the cluster (the release driver with the mount.nfs4 stand-in)", clusterImages)
	}
	images := []Image{
		{Placeholder: "OPERATOR_IMAGE", Ref: project.Operator.Pinned()},
		{Placeholder: "DRIVER_IMAGE", Ref: project.Driver.Pinned()},
		{Placeholder: "TOOLS_IMAGE", Ref: project.EFSUtilsBase.Pinned()},
	}
	work := filepath.Join(dir, "work")
	for _, d := range []string{work, filepath.Join(dir, ImagesDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(work)
	type binary struct{ placeholder, file, path string }
	var bins []binary
	sidecarPlaceholders := map[string]string{"csi-provisioner": "PROVISIONER_IMAGE", "kube-rbac-proxy": "KUBE_RBAC_PROXY_IMAGE"}
	for _, t := range localcluster.Sidecars {
		file, err := cluster.BuildTool(ctx, toolsDir, t, log)
		if err != nil {
			return nil, err
		}
		bins = append(bins, binary{sidecarPlaceholders[t.Name], file, "/usr/bin/" + t.Name})
	}
	standInPlaceholders := map[string]string{"node-driver-registrar": "NODE_DRIVER_REGISTRAR_IMAGE", "livenessprobe": "LIVENESS_PROBE_IMAGE"}
	for _, s := range localcluster.StandIns {
		out := filepath.Join(work, s.Name)
		if err := goBuild(ctx, s.Package, out, log); err != nil {
			return nil, err
		}
		bins = append(bins, binary{standInPlaceholders[s.Name], out, "/usr/bin/" + s.Name})
	}
	for _, b := range bins {
		img, err := binaryImage(b.file, b.path)
		if err != nil {
			return nil, err
		}
		im, err := writeArchive(dir, b.placeholder, img)
		if err != nil {
			return nil, err
		}
		images = append(images, im)
	}
	return images, WritePins(filepath.Join(dir, PinsFile), images)
}

func goBuild(ctx context.Context, pkg, out string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}

// binaryImage is an image for this machine's platform holding the executable file at path, its entrypoint.
func binaryImage(file, path string) (v1.Image, error) {
	return localcluster.FilesImage([]localcluster.ImageFile{{Path: path, Source: file}}, localcluster.ImageConfig{Entrypoint: []string{path}})
}

// writeArchive writes img as an OCI image layout archive, dir/images/<placeholder>.tar, whose index names it
// <repository><name>@<digest> for containerd, so that the CRI finds it by the reference the bundle pins.
func writeArchive(dir, placeholder string, img v1.Image) (Image, error) {
	repo := repository + strings.ReplaceAll(strings.ToLower(strings.TrimSuffix(placeholder, "_IMAGE")), "_", "-")
	archive := filepath.Join(dir, ImagesDir, placeholder+".tar")
	ref, err := localcluster.WriteDigestArchive(img, repo, archive)
	return Image{Placeholder: placeholder, Ref: ref, Archive: archive}, err
}

// WritePins writes the images' references in the BUNDLE_IMAGES form, sorted by placeholder.
func WritePins(path string, images []Image) error {
	var lines []string
	for _, im := range images {
		lines = append(lines, im.Placeholder+"="+im.Ref)
	}
	sort.Strings(lines)
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// ReadImages lists the images of a stack directory written by PrepareDir; Archive is empty for the project's
// images, which the suite loads from their OCI layouts.
func ReadImages(dir string) ([]Image, error) {
	b, err := os.ReadFile(filepath.Join(dir, PinsFile))
	if err != nil {
		return nil, err
	}
	var images []Image
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		placeholder, ref, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: line %q: want PLACEHOLDER=<reference>", filepath.Join(dir, PinsFile), line)
		}
		im := Image{Placeholder: placeholder, Ref: ref}
		if archive := filepath.Join(dir, ImagesDir, placeholder+".tar"); fileExists(archive) {
			im.Archive = archive
		}
		images = append(images, im)
	}
	return images, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
