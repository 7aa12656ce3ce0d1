package clusterimages

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// The cluster's images are the release's specs: only the bases of the two images built on RHEL and the botocore
// wheel layer differ.
func TestSpecsAreTheReleaseSpecsOnTheStandInRoot(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := versions.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	release := imagebuild.DefaultSpecs(v)
	got := Specs(v, "/cache/root.tar")
	if len(got) != len(release) {
		t.Fatalf("%d specs; want the release's %d", len(got), len(release))
	}
	for i, s := range got {
		want := release[i]
		switch s.Name {
		case imagebuild.EFSUtilsBase, imagebuild.Operator:
			if s.From != "rootfs:linux/amd64=/cache/root.tar" {
				t.Errorf("%s from %q; want the stand-in root", s.Name, s.From)
			}
		default:
			if s.From != want.From {
				t.Errorf("%s from %q; want the release's %q", s.Name, s.From, want.From)
			}
		}
		var wantLayers []imagebuild.LayerSpec
		for _, l := range want.Layers {
			if l.Kind != imagebuild.Wheels {
				wantLayers = append(wantLayers, l)
			}
		}
		if !reflect.DeepEqual(s.Layers, wantLayers) {
			t.Errorf("%s layers %+v; want the release's without the wheels: %+v", s.Name, s.Layers, wantLayers)
		}
		s.From, want.From, s.Layers, want.Layers = "", "", nil, nil
		if !reflect.DeepEqual(s, want) {
			t.Errorf("%s differs from the release spec beyond base and layers:\n got %+v\nwant %+v", s.Name, s, want)
		}
	}
}

// debianLikeBase is an image whose single layer has merged /usr with mount.nfs4 a link to mount.nfs, as Debian's
// nfs-common installs it.
func debianLikeBase(t *testing.T, withNFS bool) v1.Image {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	add(&tar.Header{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "usr/sbin/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "sbin", Typeflag: tar.TypeSymlink, Linkname: "usr/sbin"}, "")
	add(&tar.Header{Name: "usr/share/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "usr/share/aws-efs-csi-driver/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "usr/share/aws-efs-csi-driver/efs-static-files/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.crt", Typeflag: tar.TypeReg, Mode: 0o644}, "Amazon roots")
	add(&tar.Header{Name: "usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.conf", Typeflag: tar.TypeReg, Mode: 0o644}, "conf")
	if withNFS {
		add(&tar.Header{Name: "usr/sbin/mount.nfs", Typeflag: tar.TypeReg, Mode: 0o4755}, "real mount.nfs")
		add(&tar.Header{Name: "usr/sbin/mount.nfs4", Typeflag: tar.TypeSymlink, Linkname: "mount.nfs"}, "")
		add(&tar.Header{Name: "usr/sbin/umount.nfs4", Typeflag: tar.TypeSymlink, Linkname: "mount.nfs"}, "")
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Env = []string{"PATH=/usr/sbin:/usr/bin"}
	cf.Config.Labels = map[string]string{"name": imagebuild.Driver}
	cf.Config.Entrypoint = []string{"/usr/bin/aws-efs-csi-driver"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestWithTestLayerAddsOneLayerReplacingOnlyMountNFS4AndTheCA(t *testing.T) {
	base := debianLikeBase(t, true)
	tl := TestLayer{MountStandIn: filepath.Join(t.TempDir(), "standin"), CAFile: filepath.Join(t.TempDir(), "ca.pem"),
		Env: []string{"EFS_STANDIN_TABLE=/run/efs-standin/mounts", "PATH=/x"}}
	if err := os.WriteFile(tl.MountStandIn, []byte("#!stand-in\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// the NFS client's files are copied from the host to the same paths, with their modes
	nfsClient := filepath.Join(t.TempDir(), "nfs-ls")
	if err := os.WriteFile(nfsClient, []byte("client\n"), 0o751); err != nil {
		t.Fatal(err)
	}
	tl.NFSClient = []string{nfsClient}
	if err := os.WriteFile(tl.CAFile, []byte("test CA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1767225600, 0).UTC()
	cache := layer.NewCache(layer.Options{MTime: mtime, CacheDir: t.TempDir()})
	img, err := WithTestLayer(base, tl, cache, mtime)
	if err != nil {
		t.Fatal(err)
	}
	baseLayers, _ := base.Layers()
	layers, _ := img.Layers()
	if len(layers) != len(baseLayers)+1 {
		t.Fatalf("%d layers; want the base's %d plus one", len(layers), len(baseLayers))
	}
	rc, _ := layers[len(layers)-1].Uncompressed()
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		body, _ := io.ReadAll(tr)
		switch h.Name {
		case "usr/sbin/mount.nfs4":
			if string(body) != "#!stand-in\n" || h.Mode&0o7777 != 0o755 || h.Typeflag != tar.TypeReg {
				t.Errorf("mount.nfs4 entry: type %c mode %o body %q; want the stand-in, a 0755 file", h.Typeflag, h.Mode, body)
			}
		case strings.TrimPrefix(nfsClient, "/"):
			if string(body) != "client\n" || h.Mode&0o7777 != 0o751 || h.Typeflag != tar.TypeReg {
				t.Errorf("NFS client entry: type %c mode %o body %q; want the host file, a 0751 file", h.Typeflag, h.Mode, body)
			}
		case "usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.crt":
			if string(body) != "test CA\n" || h.Mode&0o7777 != 0o644 || h.Typeflag != tar.TypeReg {
				t.Errorf("efs-utils.crt entry: type %c mode %o body %q; want the test CA, a 0644 file", h.Typeflag, h.Mode, body)
			}
		}
	}
	slices.Sort(names)
	want := []string{strings.TrimPrefix(nfsClient, "/"), "usr/sbin/mount.nfs4", "usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.crt"}
	slices.Sort(want)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("the test layer holds %v; want only %v (mount.nfs4 where /sbin leads)", names, want)
	}
	// The merged file system: the link /sbin and mount.nfs are untouched.
	files := map[string]*tar.Header{}
	fr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := fr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(h.Name, "/")] = h
	}
	if h := files["sbin"]; h == nil || h.Typeflag != tar.TypeSymlink {
		t.Error("/sbin is no longer a link to usr/sbin")
	}
	if h := files["usr/sbin/mount.nfs"]; h == nil || h.Typeflag != tar.TypeReg {
		t.Error("usr/sbin/mount.nfs was touched")
	}
	if h := files["usr/sbin/umount.nfs4"]; h == nil || h.Typeflag != tar.TypeSymlink {
		t.Error("usr/sbin/umount.nfs4 was touched")
	}
	if h := files["usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.conf"]; h == nil || h.Typeflag != tar.TypeReg {
		t.Error("the static efs-utils.conf was touched")
	}
	cf, _ := img.ConfigFile()
	baseCF, _ := base.ConfigFile()
	if want := []string{"PATH=/x", "EFS_STANDIN_TABLE=/run/efs-standin/mounts"}; !reflect.DeepEqual(cf.Config.Env, want) {
		t.Errorf("env %v; want %v", cf.Config.Env, want)
	}
	if !reflect.DeepEqual(cf.Config.Labels, baseCF.Config.Labels) || !reflect.DeepEqual(cf.Config.Entrypoint, baseCF.Config.Entrypoint) {
		t.Errorf("labels or entrypoint changed: %v %v", cf.Config.Labels, cf.Config.Entrypoint)
	}
	if got := cf.History[len(cf.History)-1].CreatedBy; !strings.Contains(got, MountStandInLayer) {
		t.Errorf("history of the layer %q; want it to name the stand-in", got)
	}
	// Reproducible: the same inputs give the same image.
	again, err := WithTestLayer(base, tl, layer.NewCache(layer.Options{MTime: mtime, CacheDir: t.TempDir()}), mtime)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds give %s and %s", d1, d2)
	}
}

func TestWithTestLayerRefusesABaseWithoutMountNFS4(t *testing.T) {
	standIn := filepath.Join(t.TempDir(), "standin")
	if err := os.WriteFile(standIn, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1767225600, 0)
	_, err := WithTestLayer(debianLikeBase(t, false), TestLayer{MountStandIn: standIn}, layer.NewCache(layer.Options{MTime: mtime, CacheDir: t.TempDir()}), mtime)
	if err == nil || !strings.Contains(err.Error(), "/sbin/mount.nfs4") || !strings.Contains(err.Error(), "nfs-common") {
		t.Fatalf("error = %v; want it to name /sbin/mount.nfs4 and the package", err)
	}
}

// A test CA only replaces the release's CA file: a driver image without efs-utils' static files is refused.
func TestWithTestLayerRefusesABaseWithoutTheCAFile(t *testing.T) {
	dir := t.TempDir()
	tl := TestLayer{MountStandIn: filepath.Join(dir, "standin"), CAFile: filepath.Join(dir, "ca.pem")}
	for _, f := range []string{tl.MountStandIn, tl.CAFile} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, err := mutate.AppendLayers(debianLikeBase(t, true), whiteout(t, "usr/share/aws-efs-csi-driver/efs-static-files/.wh.efs-utils.crt"))
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1767225600, 0)
	_, err = WithTestLayer(base, tl, layer.NewCache(layer.Options{MTime: mtime, CacheDir: t.TempDir()}), mtime)
	if err == nil || !strings.Contains(err.Error(), "/usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.crt") {
		t.Fatalf("error = %v; want it to name the image's efs-utils.crt", err)
	}
}

// whiteout is a layer with the one whiteout entry name (removing a file of the layers below).
func whiteout(t *testing.T, name string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}
