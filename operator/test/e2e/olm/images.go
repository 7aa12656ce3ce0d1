package olm

import (
	"archive/tar"
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// repository names the images of this package; nothing is pulled from it (they are imported into containerd).
const repository = "localhost/aws-efs-csi-e2e/"

// Images OLM runs: OLMImage holds olm, catalog and cpb at the paths of OLM's own image (/bin/...) and, as that
// image does with distroless busybox, a cp at /bin/cp: the bundle unpack Job's first container runs
// `/bin/cp -Rv /bin/cpb /util/cpb` in it (catalog-operator's --util-image). OPMImage holds opm, which the unpack
// Job runs as `opm alpha bundle extract` and the catalog pod as `opm serve`.
var (
	OLMImage = repository + "olm:" + Version
	OPMImage = repository + "opm:" + RegistryVersion
)

// busybox is Debian's busybox-static (a static binary), the cp of OLMImage.
const busybox = "/bin/busybox"

// file is a file of an image: its content from Source, or a symbolic link to Link.
type file struct {
	Path   string
	Source string
	Link   string
	Data   []byte
}

// filesImage is an image for this machine's platform holding files, run as user with entrypoint, and PATH set
// (the unpack Job runs "opm" by name).
func filesImage(files []file, entrypoint []string, user string, labels map[string]string) (v1.Image, error) {
	for i, f := range files {
		if f.Source != "" {
			data, err := os.ReadFile(f.Source)
			if err != nil {
				return nil, err
			}
			files[i].Data = data
		}
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeLayer(pw, files)) }()
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
	cfg.Config.Entrypoint = entrypoint
	cfg.Config.User = user
	cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cfg.Config.Labels = labels
	return mutate.ConfigFile(img, cfg)
}

// writeLayer writes a layer's tar: every parent directory once, then the files (executables 0755, other
// files 0644 when their path says so: bundle content is data).
func writeLayer(w io.Writer, files []file) error {
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	var dirList []string
	for _, f := range files {
		for d := filepath.Dir(strings.TrimPrefix(f.Path, "/")); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
			dirList = append(dirList, d)
		}
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: epoch}); err != nil {
			return err
		}
	}
	for _, f := range files {
		rel := strings.TrimPrefix(f.Path, "/")
		if f.Link != "" {
			if err := tw.WriteHeader(&tar.Header{Name: rel, Linkname: f.Link, Mode: 0o777, Typeflag: tar.TypeSymlink, ModTime: epoch}); err != nil {
				return err
			}
			continue
		}
		mode := int64(0o755)
		if strings.HasSuffix(rel, ".yaml") || strings.HasSuffix(rel, ".json") {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: mode, Size: int64(len(f.Data)), Typeflag: tar.TypeReg, ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// writeTagged writes img as a docker archive tagged ref to out, for images that pods name by tag.
func writeTagged(img v1.Image, ref, out string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, tag, img)
}

// writeByDigest writes img as an OCI image layout archive to out, named <repo>@<digest> for containerd
// (io.containerd.image.name), and returns that reference: what OLM pulls bundles by (IfNotPresent only for
// digests; a tag would make it pull Always, from a registry there is none of).
func writeByDigest(img v1.Image, repo, out string) (string, error) {
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	ref := repo + "@" + digest.String()
	lay, err := os.MkdirTemp(filepath.Dir(out), "layout-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(lay)
	p, err := layout.Write(lay, empty.Index)
	if err != nil {
		return "", err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"io.containerd.image.name": ref})); err != nil {
		return "", err
	}
	return ref, tarDir(lay, out)
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

// bundleImage is a registry+v1 bundle image made from a bundle directory (manifests/ and metadata/), FROM
// scratch as operator-sdk builds them, with the annotations of metadata/annotations.yaml as labels.
func bundleImage(dir string, labels map[string]string) (v1.Image, error) {
	var files []file
	for _, sub := range []string{"manifests", "metadata"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			return nil, fmt.Errorf("bundle directory %s: %w", dir, err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				files = append(files, file{Path: "/" + sub + "/" + e.Name(), Source: filepath.Join(dir, sub, e.Name())})
			}
		}
	}
	return filesImage(files, nil, "", labels)
}
