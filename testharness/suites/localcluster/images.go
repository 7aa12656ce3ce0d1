package localcluster

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ImagesDirEnv names the directory of the project's images for the cluster: OCI layouts and the manifest
// images.json, written by testharness/pkg/clusterimages (`go tool mage test` builds them before this suite and
// sets the variable; `go tool mage cluster:images` builds them for people).
const ImagesDirEnv = "AWS_EFS_CSI_CLUSTER_IMAGES"

// imagesManifest is the name and shape of the manifest clusterimages writes.
const imagesManifest = "images.json"

type manifest struct {
	Platform string `json:"platform"`
	Images   []struct {
		Name   string `json:"name"`
		Layout string `json:"layout"`
		Tag    string `json:"tag"`
		Digest string `json:"digest"`
	} `json:"images"`
}

// The image names in the manifest.
const (
	efsUtilsBaseImage     = "aws-efs-utils-base"
	driverImage           = "aws-efs-csi-driver"
	operatorImage         = "aws-efs-csi-driver-operator"
	driverForClusterImage = "aws-efs-csi-driver-for-cluster"
)

// ProjectImageRepository is where the project's images live in the cluster's containerd; nothing is pulled from
// it (pods use imagePullPolicy IfNotPresent or Never).
const ProjectImageRepository = "localhost/aws-efs-csi"

// ProjectImage is one of the project's images loaded into the cluster.
type ProjectImage struct {
	// Reference is the tagged name, ProjectImageRepository/<name>:<tag>, the tag being the module's version.
	Reference string
	// Digest is the image index digest, the same as in the OCI layout it was loaded from.
	Digest v1.Hash
	// Layout is the OCI layout directory it was loaded from.
	Layout string
}

// Pinned is the reference by digest, <repository>@sha256:..., as a bundle pins its images.
func (p ProjectImage) Pinned() string {
	repo := p.Reference
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + "@" + p.Digest.String()
}

// ProjectImages are the project's images in the cluster, for tests that fill the bundle's image placeholders.
type ProjectImages struct {
	// Operator is the release operator image.
	Operator ProjectImage
	// Driver is the driver image the cluster runs: the release driver image plus one layer replacing only
	// mount.nfs4 with the NFS stand-in (this kernel has no NFS client). Its Reference is empty when the stand-in
	// was not built.
	Driver ProjectImage
	// ReleaseDriver is the release driver image, unchanged.
	ReleaseDriver ProjectImage
	// EFSUtilsBase is the release efs-utils base image.
	EFSUtilsBase ProjectImage
}

// ReadProjectImages reads the manifest in dir (ImagesDirEnv's value) and names each image; it loads nothing.
func ReadProjectImages(dir string) (ProjectImages, error) {
	if dir == "" {
		return ProjectImages{}, fmt.Errorf("%s is not set: run the cluster suite with `go tool mage test`, or build the images with `go tool mage cluster:images` and set %s to the directory it prints", ImagesDirEnv, ImagesDirEnv)
	}
	b, err := os.ReadFile(filepath.Join(dir, imagesManifest))
	if err != nil {
		return ProjectImages{}, fmt.Errorf("%s=%s: %w", ImagesDirEnv, dir, err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return ProjectImages{}, fmt.Errorf("%s: %w", filepath.Join(dir, imagesManifest), err)
	}
	var out ProjectImages
	slots := map[string]*ProjectImage{
		efsUtilsBaseImage: &out.EFSUtilsBase, driverImage: &out.ReleaseDriver,
		operatorImage: &out.Operator, driverForClusterImage: &out.Driver,
	}
	for _, img := range m.Images {
		slot, ok := slots[img.Name]
		if !ok {
			continue
		}
		d, err := v1.NewHash(img.Digest)
		if err != nil {
			return ProjectImages{}, fmt.Errorf("%s: image %s: digest %q: %w", imagesManifest, img.Name, img.Digest, err)
		}
		*slot = ProjectImage{
			Reference: ProjectImageRepository + "/" + img.Name + ":" + img.Tag,
			Digest:    d, Layout: filepath.Join(dir, img.Layout),
		}
	}
	for name, slot := range slots {
		if slot.Reference == "" && name != driverForClusterImage {
			return ProjectImages{}, fmt.Errorf("%s lists no image %s", filepath.Join(dir, imagesManifest), name)
		}
	}
	return out, nil
}

// All lists the images that were built, the driver for the cluster first.
func (p ProjectImages) All() []ProjectImage {
	var out []ProjectImage
	for _, img := range []ProjectImage{p.Driver, p.ReleaseDriver, p.Operator, p.EFSUtilsBase} {
		if img.Reference != "" {
			out = append(out, img)
		}
	}
	return out
}

// LoadProjectImages imports the project's images of dir (ImagesDirEnv's value) into the cluster's containerd
// under their References and Pinned names, keeping their digests (each OCI layout is streamed to `ctr images
// import` as an OCI archive whose index names the image).
func (c *Cluster) LoadProjectImages(ctx context.Context, dir string, log io.Writer) (ProjectImages, error) {
	imgs, err := ReadProjectImages(dir)
	if err != nil {
		return ProjectImages{}, err
	}
	for _, img := range imgs.All() {
		fmt.Fprintf(log, "localcluster: loading %s (%s)\n", img.Reference, img.Digest)
		if err := importLayout(ctx, c.state.ContainerdSocket, img); err != nil {
			return ProjectImages{}, err
		}
	}
	return imgs, nil
}

// LoadProjectImage imports one of the project's images (as LoadProjectImages does each), e.g. only the driver of
// another build.
func (c *Cluster) LoadProjectImage(ctx context.Context, img ProjectImage) error {
	return importLayout(ctx, c.state.ContainerdSocket, img)
}

// importLayout streams img's OCI layout to ctr as an OCI archive whose index.json lists only the image index,
// annotated with the name containerd gives it.
func importLayout(ctx context.Context, socket string, img ProjectImage) error {
	index, err := archiveIndex(img)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeLayoutArchive(pw, img.Layout, index)) }()
	cmd := exec.CommandContext(ctx, "ctr", "--address", socket, "--namespace", criNamespace, "images", "import", "-")
	cmd.Stdin = pr
	out, err := cmd.CombinedOutput()
	pr.CloseWithError(io.ErrClosedPipe) // unblock the writer if ctr stopped reading
	if err != nil {
		return fmt.Errorf("ctr images import of %s (%s): %w: %s", img.Layout, img.Reference, err, out)
	}
	return nil
}

// archiveIndex is the index.json of the archive: the layout's descriptor of img twice, named for containerd by
// its tag and by its digest. The CRI finds an image only by a name containerd has for it (a pull records both
// forms; an import only the names in the archive), and a bundle pins images by digest.
func archiveIndex(img ProjectImage) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(img.Layout, "index.json"))
	if err != nil {
		return nil, err
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s/index.json: %w", img.Layout, err)
	}
	for _, d := range idx.Manifests {
		if d.Digest != img.Digest {
			continue
		}
		byTag, byDigest := d, d
		byTag.Annotations = map[string]string{containerdImageName: img.Reference}
		byDigest.Annotations = map[string]string{containerdImageName: img.Pinned()}
		idx.Manifests = []v1.Descriptor{byTag, byDigest}
		return json.Marshal(idx)
	}
	return nil, fmt.Errorf("the OCI layout %s does not list %s", img.Layout, img.Digest)
}

// containerdImageName is the annotation by which containerd's importer names an image of an OCI archive.
const containerdImageName = "io.containerd.image.name"

// writeLayoutArchive writes the layout directory as a tar, with index.json replaced.
func writeLayoutArchive(w io.Writer, dir string, index []byte) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." || rel == "index.json" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
			return tw.WriteHeader(hdr)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "index.json", Mode: 0o644, Size: int64(len(index)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, bytes.NewReader(index)); err != nil {
		return err
	}
	return tw.Close()
}
