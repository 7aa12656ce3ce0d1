package stack

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
	"github.com/openshift/aws-efs-csi/operator/test/e2e/localcluster"
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
)

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
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeLayer(pw, path, data)) }()
		return pr, nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Entrypoint = []string{path}
	cfg.Config.Env = []string{"PATH=/usr/bin:/bin"}
	return mutate.ConfigFile(img, cfg)
}

// writeLayer writes the layer's tar: the parent directories and the file.
func writeLayer(w io.Writer, path string, data []byte) error {
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	rel := strings.TrimPrefix(path, "/")
	var dirs []string
	for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
		dirs = append([]string{d + "/"}, dirs...)
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, Typeflag: tar.TypeDir, ModTime: epoch}); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: epoch}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	return tw.Close()
}

// writeArchive writes img as an OCI image layout archive, dir/images/<placeholder>.tar, whose index names it
// <repository>@<digest> for containerd (io.containerd.image.name), so that the CRI finds it by the reference the
// bundle pins.
func writeArchive(dir, placeholder string, img v1.Image) (Image, error) {
	digest, err := img.Digest()
	if err != nil {
		return Image{}, err
	}
	ref := repository + strings.ToLower(strings.TrimSuffix(placeholder, "_IMAGE")) + "@" + digest.String()
	ref = strings.ReplaceAll(ref, "_", "-")
	lay, err := os.MkdirTemp(dir, "layout-")
	if err != nil {
		return Image{}, err
	}
	defer os.RemoveAll(lay)
	p, err := layout.Write(lay, empty.Index)
	if err != nil {
		return Image{}, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"io.containerd.image.name": ref})); err != nil {
		return Image{}, err
	}
	archive := filepath.Join(dir, ImagesDir, placeholder+".tar")
	return Image{Placeholder: placeholder, Ref: ref, Archive: archive}, tarDir(lay, archive)
}

// tarDir writes the files under dir into the tar archive out, with paths relative to dir.
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	tw := tar.NewWriter(bw)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name, _ = filepath.Rel(dir, path)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
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
