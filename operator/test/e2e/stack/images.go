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
	// Archive is an OCI image layout archive that `ctr images import` loads under Ref.
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

// program is a binary of this repository packed as a one-binary development image.
type program struct {
	placeholder, pkg, path, user string
}

// devPrograms are the images this repository builds, as development images: the binary alone, at the path and
// with the user of the real image's Containerfile.
var devPrograms = []program{
	{"OPERATOR_IMAGE", "github.com/openshift/aws-efs-csi/operator/cmd/aws-efs-csi-driver-operator", "/usr/bin/aws-efs-csi-driver-operator", "1001"},
	{"DRIVER_IMAGE", "github.com/openshift/aws-efs-csi/driver/cmd/aws-efs-csi-driver", "/usr/bin/aws-efs-csi-driver", "0"},
}

// busybox is Debian's busybox-static; the development tools image runs the init containers' shell scripts with it.
const busybox = "/bin/busybox"

// PrepareDir writes the stack's images into dir/ImagesDir and their pins into dir/PinsFile: development images of
// the operator and the driver (the binary alone), the upstream sidecars built from their modules (cached in
// toolsDir), our node-driver-registrar and livenessprobe stand-ins, and a tools image made of busybox.
func PrepareDir(ctx context.Context, dir, toolsDir string, log io.Writer) ([]Image, error) {
	work := filepath.Join(dir, "work")
	for _, d := range []string{work, filepath.Join(dir, ImagesDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(work)
	type binary struct{ placeholder, file, path, user string }
	var bins []binary
	for _, p := range devPrograms {
		out := filepath.Join(work, strings.ToLower(p.placeholder))
		if err := goBuild(ctx, p.pkg, out, log); err != nil {
			return nil, err
		}
		bins = append(bins, binary{p.placeholder, out, p.path, p.user})
	}
	sidecarPlaceholders := map[string]string{"csi-provisioner": "PROVISIONER_IMAGE", "kube-rbac-proxy": "KUBE_RBAC_PROXY_IMAGE"}
	for _, t := range localcluster.Sidecars {
		file, err := cluster.BuildTool(ctx, toolsDir, t, log)
		if err != nil {
			return nil, err
		}
		bins = append(bins, binary{sidecarPlaceholders[t.Name], file, "/usr/bin/" + t.Name, ""})
	}
	standInPlaceholders := map[string]string{"node-driver-registrar": "NODE_DRIVER_REGISTRAR_IMAGE", "livenessprobe": "LIVENESS_PROBE_IMAGE"}
	for _, s := range localcluster.StandIns {
		out := filepath.Join(work, s.Name)
		if err := goBuild(ctx, s.Package, out, log); err != nil {
			return nil, err
		}
		bins = append(bins, binary{standInPlaceholders[s.Name], out, "/usr/bin/" + s.Name, ""})
	}
	var images []Image
	for _, b := range bins {
		img, err := binaryImage(b.file, b.path, b.user, nil)
		if err != nil {
			return nil, err
		}
		im, err := writeArchive(dir, b.placeholder, img)
		if err != nil {
			return nil, err
		}
		images = append(images, im)
	}
	tools, err := binaryImage(busybox, "/bin/busybox", "", []string{"sh", "cp", "cat", "printf", "rm", "mkdir"})
	if err != nil {
		return nil, fmt.Errorf("tools image (apt-get install busybox-static): %w", err)
	}
	im, err := writeArchive(dir, "TOOLS_IMAGE", tools)
	if err != nil {
		return nil, err
	}
	images = append(images, im)
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

// binaryImage is an image for this machine's platform holding the executable file at path, its entrypoint, run
// as user; each of links is a symbolic link to it in the same directory (busybox's applets).
func binaryImage(file, path, user string, links []string) (v1.Image, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeLayer(pw, path, data, links)) }()
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
	cfg.Config.User = user
	cfg.Config.Env = []string{"PATH=/usr/bin:/bin"}
	return mutate.ConfigFile(img, cfg)
}

// writeLayer writes the layer's tar: the parent directories, the file, and the links to it.
func writeLayer(w io.Writer, path string, data []byte, links []string) error {
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
	for _, l := range links {
		hdr := &tar.Header{Name: filepath.Join(filepath.Dir(rel), l), Linkname: filepath.Base(path), Mode: 0o777, Typeflag: tar.TypeSymlink, ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
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

// ReadImages lists the images of a stack directory written by PrepareDir.
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
		images = append(images, Image{Placeholder: placeholder, Ref: ref, Archive: filepath.Join(dir, ImagesDir, placeholder+".tar")})
	}
	return images, nil
}
