package imagebuild

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
)

// layerFile is one tar entry as read back from a pushed layer.
type layerFile struct {
	typ      byte
	mode     int64
	uid, gid int
	mtime    int64
	link     string
	data     string
}

func readLayerFiles(t *testing.T, l v1.Layer) map[string]layerFile {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]layerFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = layerFile{h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime.Unix(), h.Linkname, string(data)}
	}
}

func TestRunPushesFourPlatformImagesAndReadsThemBack(t *testing.T) {
	pr := newProject(t)
	base := writeBase(t, rhelLike(), platform.Known())
	reg := startRegistry(t)
	opts := options(t, pr, base, t.TempDir())
	opts.Registry = reg + "/openshift"
	var progress bytes.Buffer
	opts.Progress = &progress
	results, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	if len(results) != 3 {
		t.Fatalf("%d results, want 3", len(results))
	}
	for _, r := range results {
		if !r.Changed || !r.Pushed || r.PushedBytes == 0 {
			t.Errorf("%s: changed=%v pushed=%v bytes=%d on a cold build", r.Name, r.Changed, r.Pushed, r.PushedBytes)
		}
	}
	for _, want := range []string{
		"images: aws-efs-utils-base linux/s390x: layer efs-utils ",
		"images: aws-efs-csi-driver linux/ppc64le: layer aws-efs-csi-driver built",
		"images: aws-efs-csi-driver-operator: index sha256:",
		"images: aws-efs-csi-driver: pushed " + reg + "/openshift/aws-efs-csi-driver:v1.2.3",
	} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if n := strings.Count(progress.String(), "layer efs-utils built"); n != 1 {
		t.Errorf("the platform-independent efs-utils layer was built %d times, want once:\n%s", n, progress.String())
	}

	for _, r := range results {
		ref, err := name.ParseReference(fmt.Sprintf("%s/openshift/%s:%s", reg, r.Name, r.Tag))
		if err != nil {
			t.Fatal(err)
		}
		idx, err := remote.Index(ref, remote.WithContext(t.Context()))
		if err != nil {
			t.Fatalf("%s: reading the pushed index: %v", r.Name, err)
		}
		if err := validate.Index(idx); err != nil {
			t.Errorf("%s: the pushed index is not valid: %v", r.Name, err)
		}
		im, _ := idx.IndexManifest()
		if im.MediaType != types.OCIImageIndex {
			t.Errorf("%s: index media type %s", r.Name, im.MediaType)
		}
		var got []string
		for _, d := range im.Manifests {
			got = append(got, d.Platform.OS+"/"+d.Platform.Architecture)
		}
		if strings.Join(got, ",") != "linux/amd64,linux/arm64,linux/ppc64le,linux/s390x" {
			t.Errorf("%s: index platforms %v", r.Name, got)
		}
		for _, d := range im.Manifests {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			checkImage(t, r.Name, d.Platform.Architecture, img)
		}
	}
}

// checkImage verifies config and the files of the layers the assembly added.
func checkImage(t *testing.T, imageName, arch string, img v1.Image) {
	t.Helper()
	where := imageName + " " + arch
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	labels := cf.Config.Labels
	wantVersion := "v1.2.3"
	if imageName == Operator {
		wantVersion = "v0.4.0"
	}
	for k, want := range map[string]string{
		"version": wantVersion, "release": "0123456789ab", "vcs-ref": "0123456789abcdef0123456789abcdef01234567",
		"io.openshift.tags":                map[string]string{EFSUtilsBase: "aws,efs,efs-utils,nfs,storage", Driver: "aws,efs,csi,storage,openshift", Operator: "aws,efs,csi,storage,operator,openshift"}[imageName],
		"org.opencontainers.image.version": wantVersion, "org.opencontainers.image.created": "2026-01-01T00:00:00Z",
		"org.opencontainers.image.source": SourceURL, "name": imageName, "com.redhat.component": imageName + "-container",
		"vendor": Vendor, "maintainer": Maintainer, "url": SourceURL, "cpe": testCPE,
	} {
		if labels[k] != want {
			t.Errorf("%s: label %s = %q, want %q", where, k, labels[k], want)
		}
	}
	for _, k := range []string{"io.k8s.display-name", "io.k8s.description", "org.opencontainers.image.title", "org.opencontainers.image.description"} {
		if labels[k] == "" {
			t.Errorf("%s: label %s missing", where, k)
		}
	}
	if !cf.Created.Time.Equal(testTime) {
		t.Errorf("%s: created %s, want %s", where, cf.Created.Time, testTime)
	}
	if cf.Architecture != arch || cf.OS != "linux" {
		t.Errorf("%s: config platform %s/%s", where, cf.OS, cf.Architecture)
	}
	layers, _ := img.Layers()
	switch imageName {
	case EFSUtilsBase:
		if len(layers) != 3 || cf.Config.Cmd[0] != "/bin/bash" {
			t.Fatalf("%s: %d layers, cmd %v; want base + efs-utils + wheels and the base's command", where, len(layers), cf.Config.Cmd)
		}
		efs := readLayerFiles(t, layers[1])
		wantFiles := map[string]int64{
			"usr/sbin/mount.efs": 0o755, "etc/amazon/efs/efs-utils.conf": 0o644, "etc/amazon/efs/efs-utils.crt": 0o444,
			"usr/lib/aws-efs-utils/efs_utils/mount.py": 0o644, "usr/lib/aws-efs-utils/efs_utils/stunnel/__init__.py": 0o644,
			"run/efs/": 0o755, "var/log/amazon/efs/": 0o700, "etc/amazon/": 0o755, "usr/lib/aws-efs-utils/": 0o755,
		}
		checkFiles(t, where+" efs-utils layer", efs, wantFiles, []string{"sbin/", "sbin/mount.efs", "var/run/", "usr/lib/aws-efs-utils/efs_utils/mount_test.py", "usr/lib/aws-efs-utils/efs_utils/__pycache__/x.pyc"})
		pyc := "usr/lib/aws-efs-utils/efs_utils/__pycache__/mount.cpython-" + strings.ReplaceAll(pyVersion, ".", "") + ".pyc"
		if f, ok := efs[pyc]; !ok || f.mode != 0o644 || !strings.Contains(f.data, "/usr/lib/aws-efs-utils/efs_utils/mount.py") {
			t.Errorf("%s: the efs-utils layer lacks the bytecode %s of the base's Python (have %v)", where, pyc, keys(efs))
		}
		sp := "usr/local/lib/python" + pyVersion + "/site-packages/"
		whl := readLayerFiles(t, layers[2])
		checkFiles(t, where+" wheels layer", whl, map[string]int64{
			sp + "botocore/__init__.py": 0o644, sp + "botocore-1.34.140.dist-info/RECORD": 0o644,
			sp + "botocore-1.34.140.dist-info/INSTALLER": 0o644, "usr/local/lib/": 0o755,
		}, nil)
		if !strings.Contains(whl[sp+"botocore-1.34.140.dist-info/RECORD"].data, "botocore/__init__.py,sha256=") {
			t.Errorf("%s: RECORD does not list the installed files:\n%s", where, whl[sp+"botocore-1.34.140.dist-info/RECORD"].data)
		}
	case Driver:
		if len(layers) != 5 {
			t.Fatalf("%s: %d layers, want the 3 of the efs-utils base + static files + binary", where, len(layers))
		}
		if want := []string{"/usr/bin/aws-efs-csi-driver", "--efs-utils-static-files-path=" + StaticFilesDir}; !slices.Equal(cf.Config.Entrypoint, want) || cf.Config.Cmd != nil || cf.Config.User != "0" {
			t.Errorf("%s: entrypoint %v cmd %v user %q", where, cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.User)
		}
		static := readLayerFiles(t, layers[3])
		checkFiles(t, where+" static files layer", static, map[string]int64{
			"etc/amazon/.wh.efs": 0o644, "usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.conf": 0o644,
			"usr/share/aws-efs-csi-driver/efs-static-files/efs-utils.crt": 0o444, "usr/share/aws-efs-csi-driver/": 0o755, "usr/share/": 0o755,
		}, []string{"usr/", "etc/amazon/efs/efs-utils.conf"})
		bin := readLayerFiles(t, layers[4])
		checkFiles(t, where+" binary layer", bin, map[string]int64{"usr/bin/aws-efs-csi-driver": 0o755}, nil)
		if got := bin["usr/bin/aws-efs-csi-driver"].data; got != "driver for linux/"+arch {
			t.Errorf("%s: the binary layer holds %q", where, got)
		}
	case Operator:
		if len(layers) != 2 || !slices.Equal(cf.Config.Entrypoint, []string{"/usr/bin/aws-efs-csi-driver-operator"}) || cf.Config.User != "1001" {
			t.Errorf("%s: %d layers, entrypoint %v, user %q", where, len(layers), cf.Config.Entrypoint, cf.Config.User)
		}
		if !slices.Contains(cf.Config.Env, "container=oci") {
			t.Errorf("%s: the base's environment was lost: %v", where, cf.Config.Env)
		}
	}
}

// checkFiles asserts modes, root ownership and the fixed mtime of want, and the absence of absent.
func checkFiles(t *testing.T, where string, got map[string]layerFile, want map[string]int64, absent []string) {
	t.Helper()
	for p, mode := range want {
		f, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: no %s (have %v)", where, p, keys(got))
		case f.mode != mode || f.uid != 0 || f.gid != 0 || f.mtime != testTime.Unix():
			t.Errorf("%s: %s mode %o owner %d:%d mtime %d; want mode %o, 0:0, %d", where, p, f.mode, f.uid, f.gid, f.mtime, mode, testTime.Unix())
		}
	}
	for _, p := range absent {
		if _, ok := got[p]; ok {
			t.Errorf("%s: holds %s, which it must not", where, p)
		}
	}
}

func keys(m map[string]layerFile) []string { return slices.Sorted(maps.Keys(m)) }

func TestRunIsReproducibleAndIncremental(t *testing.T) {
	pr := newProject(t)
	base := writeBase(t, rhelLike(), platform.Known())
	reg := startRegistry(t)
	first := options(t, pr, base, t.TempDir())
	first.Registry = reg
	cold, err := Run(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	// A clean build elsewhere (empty output and caches) gives the same digests.
	second := options(t, pr, base, t.TempDir())
	clean, err := Run(t.Context(), second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cold {
		if cold[i].Digest != clean[i].Digest {
			t.Errorf("%s: two clean builds gave %s and %s", cold[i].Name, cold[i].Digest, clean[i].Digest)
		}
	}
	// Warm: nothing changed, nothing rebuilt, written or pushed.
	var progress bytes.Buffer
	first.Progress = &progress
	warm, err := Run(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range warm {
		if r.Changed || r.Pushed || r.Digest != cold[i].Digest {
			t.Errorf("%s: warm build changed=%v pushed=%v digest %s (cold %s)", r.Name, r.Changed, r.Pushed, r.Digest, cold[i].Digest)
		}
	}
	if strings.Contains(progress.String(), " built (") {
		t.Errorf("a warm build rebuilt layers:\n%s", progress.String())
	}
	// Only the driver binary changes: only the driver image changes, and its push uploads the new binary layers
	// and manifests, not the efs-utils base's layers.
	for _, p := range platform.Known() {
		writeFile(t, filepath.Join(pr.bin, p.Dir(), Driver), "driver v2 for "+p.String())
	}
	progress.Reset()
	next, err := Run(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range next {
		changed := r.Name == Driver
		if r.Changed != changed || r.Pushed != changed || (r.Digest != cold[i].Digest) != changed {
			t.Errorf("%s after a driver-only change: changed=%v pushed=%v", r.Name, r.Changed, r.Pushed)
		}
	}
	if n := strings.Count(progress.String(), " built ("); n != 4 {
		t.Errorf("%d layers rebuilt after a driver-only change, want the 4 driver binary layers:\n%s", n, progress.String())
	}
	if pushed := next[1].PushedBytes; pushed == 0 || pushed > 64<<10 {
		t.Errorf("driver push after a driver-only change uploaded %d bytes; want only the small binary layers and manifests", pushed)
	}
	data, err := os.ReadFile(filepath.Join(first.OutDir, DigestsFile))
	if err != nil || !strings.Contains(string(data), next[1].Digest.String()) || !strings.Contains(string(data), `"linux/s390x": "sha256:`) {
		t.Errorf("digests.json does not list the new driver digest: %v\n%s", err, data)
	}
}

func TestRunNamesWhatTheBaseLacks(t *testing.T) {
	pr := newProject(t)
	base := writeBase(t, rhelLike("usr/bin/stunnel", "usr/sbin/mount.nfs4"), platform.Known())
	opts := options(t, pr, base, t.TempDir())
	_, err := Run(t.Context(), opts)
	for _, want := range []string{
		"aws-efs-utils-base linux/", "(AWS_EFS_UTILS_BASE_FROM) lacks what efs-utils needs",
		"stunnel (RPM stunnel): no executable at /usr/bin/stunnel", "mount.nfs4 (RPM nfs-utils)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run = %v\nwant an error containing %q", err, want)
		}
	}
}

func TestRunBaseErrors(t *testing.T) {
	pr := newProject(t)
	twoPlatforms := writeBase(t, rhelLike(), platform.Known()[:2])
	full := writeBase(t, rhelLike(), platform.Known())
	rows := []struct {
		name, from, want string
	}{
		{"missing platforms", twoPlatforms, "aws-efs-utils-base: base (AWS_EFS_UTILS_BASE_FROM=" + twoPlatforms + "):\n" +
			"  - linux/ppc64le: " + twoPlatforms + " has no image for linux/ppc64le (it has: linux/amd64, linux/arm64)\n" +
			"  - linux/s390x: " + twoPlatforms + " has no image for linux/s390x (it has: linux/amd64, linux/arm64)"},
		{"layout ref name", full + ":9.6", ""},
		{"unknown layout ref name", full + ":8.10", `has no manifest named "8.10"`},
		{"not a layout", "oci:" + t.TempDir(), "reading the OCI layout"},
		{"unreachable registry", "127.0.0.1:1/ocp/base-rhel9:4.22", "set AWS_EFS_UTILS_BASE_FROM to a reachable registry reference, oci:<OCI layout directory>, tarball:<image tarball> or rootfs:<os/arch>=<file-system tarball>"},
		{"bad reference", "UPPER/Case:x", "not a registry reference, oci:<dir>, image:<name> or scratch"},
		{"no base", "", `aws-efs-utils-base: no base: set AWS_EFS_UTILS_BASE_FROM to an image of the "runtime" stage of images/aws-efs-utils-base/Containerfile`},
		{"rootfs without a platform", "rootfs:/tmp/x.tar", `"/tmp/x.tar": want os/arch=<file-system tarball>`},
		{"rootfs lacking platforms", "rootfs:linux/amd64=" + rootfsTar(t), "linux/arm64: no file-system tarball for linux/arm64"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			opts := options(t, pr, row.from, t.TempDir())
			opts.Specs = opts.Specs[:1]
			_, err := Run(t.Context(), opts)
			if row.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("Run = %v\nwant an error containing %q", err, row.want)
			}
		})
	}
}

// TestBasesFromTarballs assembles the efs-utils base on file-system tarballs (what mmdebstrap writes; how the
// cluster suite builds runnable images) and the operator on a `docker save` tarball of a Docker-format image: the
// results have OCI media types throughout and none of the base's labels.
func TestBasesFromTarballs(t *testing.T) {
	pr := newProject(t)
	rootfs := rootfsTar(t)
	opts := options(t, pr, "rootfs:linux/arm64="+rootfs+",linux/amd64="+rootfs, t.TempDir())
	opts.Specs[2].From = "tarball:" + dockerTarball(t)
	opts.Platforms = platform.Supported()[:1]
	results, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		p, err := layout.FromPath(r.Layout)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := p.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		inner, err := idx.ImageIndex(r.Digest)
		if err != nil {
			t.Fatal(err)
		}
		img, err := inner.Image(r.Platforms["linux/amd64"])
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
			t.Errorf("%s: manifest %s, config %s", r.Name, m.MediaType, m.Config.MediaType)
		}
		for i, l := range m.Layers {
			if l.MediaType != types.OCILayer {
				t.Errorf("%s: layer %d has media type %s, want %s", r.Name, i, l.MediaType, types.OCILayer)
			}
		}
		if err := validate.Image(img); err != nil {
			t.Errorf("%s: %v", r.Name, err)
		}
		cf, _ := img.ConfigFile()
		if cf.Config.Labels["name"] != r.Name || cf.Config.Labels["release-of-base"] != "" || cf.Config.Labels["com.redhat.component"] != r.Name+"-container" {
			t.Errorf("%s: labels %v", r.Name, cf.Config.Labels)
		}
	}
}

// rootfsTar writes a file-system tarball holding rhelLike().
func rootfsTar(t *testing.T) string {
	t.Helper()
	placed, err := layer.Place(rhelLike(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := layer.NewCache(layer.Options{MTime: time.Unix(1, 0), CacheDir: t.TempDir()}).Build(placed)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := res.Layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	path := filepath.Join(t.TempDir(), "rootfs.tar")
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// dockerTarball writes a `docker save` tarball of a Docker-format linux/amd64 image with labels of its own.
func dockerTarball(t *testing.T) string {
	t.Helper()
	l, err := tarball.LayerFromFile(rootfsTar(t), tarball.WithMediaType(types.DockerLayer))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.DockerManifestSchema2), mutate.Addendum{Layer: l, MediaType: types.DockerLayer})
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Labels = map[string]string{"name": "rhel9", "release-of-base": "7", "com.redhat.component": "rhel-container"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	if m, _ := img.Manifest(); m.Layers[0].MediaType != types.DockerLayer {
		t.Fatalf("the fixture is not a Docker-format image: %s", m.Layers[0].MediaType)
	}
	path := filepath.Join(t.TempDir(), "base.tar")
	if err := tarball.WriteToFile(path, name.MustParseReference("registry.example.com/rhel9:latest"), img); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlainHTTPOnlyWhenAskedOrLoopback(t *testing.T) {
	rows := []struct {
		url      string
		insecure bool
		refused  bool
	}{
		{"http://10.0.0.7:5000/v2/", false, true},
		{"http://registry.example.com/v2/", false, true},
		{"http://10.0.0.7:5000/v2/", true, false},
		{"http://127.0.0.1:5000/v2/", false, false},
		{"http://localhost:5000/v2/", false, false},
		{"http://[::1]:5000/v2/", false, false},
		{"https://registry.example.com/v2/", false, false},
	}
	for _, row := range rows {
		tr := &policyTransport{next: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}, nil
		}), insecure: row.insecure}
		req, _ := http.NewRequest(http.MethodGet, row.url, nil)
		_, err := tr.RoundTrip(req)
		if refused := err != nil && strings.Contains(err.Error(), "set REGISTRY_INSECURE=true"); refused != row.refused {
			t.Errorf("%s insecure=%v: err = %v, want refused=%v", row.url, row.insecure, err, row.refused)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
