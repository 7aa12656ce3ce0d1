package localcluster

import (
	"archive/tar"
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ImageFile is a file of an image FilesImage makes: its content from Source (a file on this machine) or Data, or
// a symbolic link to Link. Files are executables (0755) unless their path ends in .yaml or .json (data, 0644).
type ImageFile struct {
	Path   string
	Source string
	Data   []byte
	Link   string
}

// ImageConfig is the configuration of an image FilesImage makes.
type ImageConfig struct {
	Entrypoint []string
	User       string
	Labels     map[string]string
}

// FilesImage is an image for this machine's platform with one layer holding files (every parent directory once,
// root-owned, time zero) and PATH set, for the programs the tests build and pack: stand-ins, sidecars, OLM.
func FilesImage(files []ImageFile, cfg ImageConfig) (v1.Image, error) {
	files = append([]ImageFile(nil), files...)
	for i, f := range files {
		if f.Source != "" {
			data, err := os.ReadFile(f.Source)
			if err != nil {
				return nil, err
			}
			files[i].Data = data
		}
	}
	// One uncompressed layer, written once: a gzip layer is compressed again for every digest and every archive
	// written, which for OLM's three programs took most of a minute in a -race test binary. containerd imports
	// uncompressed layers as docker save writes them.
	var tarred bytes.Buffer
	if err := writeFilesTar(&tarred, files); err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(tarred.Bytes(), types.DockerUncompressedLayer))
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = cfg.Entrypoint
	cf.Config.User = cfg.User
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cf.Config.Labels = cfg.Labels
	return mutate.ConfigFile(img, cf)
}

// writeFilesTar writes a layer's tar: every parent directory once, then the files.
func writeFilesTar(w io.Writer, files []ImageFile) error {
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

// WriteDigestArchive writes img as an OCI image layout archive to out whose index names it <repo>@<digest> for
// containerd (io.containerd.image.name), and returns that reference: the name by which the CRI finds it when a
// pod, a bundle or a catalog pins it by digest (IfNotPresent, nothing is pulled).
func WriteDigestArchive(img v1.Image, repo, out string) (string, error) {
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
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{containerdImageName: ref})); err != nil {
		return "", err
	}
	return ref, TarDir(lay, out)
}

// TarDir writes the files under dir into the tar archive out, with paths relative to dir: an OCI layout
// directory becomes an archive `ctr images import` reads.
func TarDir(dir, out string) error {
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
