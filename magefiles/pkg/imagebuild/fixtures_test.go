package imagebuild

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheeltest"
)

var testTime = time.Unix(1767225600, 0).UTC()

const testCPE = "cpe:/a:redhat:openshift:5.0::el9"

// testVersions stands for images/versions.conf.
var testVersions = versions.Versions{Values: map[string]string{"BASE_IMAGE": "registry.example.com/ocp/5.0:base-rhel9", "CPE": testCPE}}

// pyVersion is the Python of the synthetic bases: the host's, so that the efs-utils bytecode can be compiled here
// (RHEL 9 has 3.9; bytecode needs an interpreter of the base's minor version).
var pyVersion = func() string {
	out, err := exec.Command("/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		panic("the host's /usr/bin/python3 is needed: " + err.Error())
	}
	return strings.TrimSpace(string(out))
}()

// rhelLike lists what a RHEL 9 runtime base holds that the assembly looks at: merged /usr (sbin → usr/sbin),
// /var/run → ../run, python3 → python3.N, stunnel and mount.nfs4.
func rhelLike(without ...string) []layer.Entry {
	all := []layer.Entry{
		{Path: "usr/bin", Kind: layer.Dir, Mode: 0o755},
		{Path: "usr/sbin", Kind: layer.Dir, Mode: 0o755},
		{Path: "usr/lib64/python" + pyVersion + "/os.py", Kind: layer.File, Mode: 0o644, Data: []byte("# os\n")},
		{Path: "sbin", Kind: layer.Symlink, Link: "usr/sbin"},
		{Path: "bin", Kind: layer.Symlink, Link: "usr/bin"},
		{Path: "run", Kind: layer.Dir, Mode: 0o755},
		{Path: "var/run", Kind: layer.Symlink, Link: "../run"},
		{Path: "etc/os-release", Kind: layer.File, Mode: 0o644, Data: []byte("ID=rhel\n")},
		{Path: "usr/bin/python" + pyVersion, Kind: layer.File, Mode: 0o755, Data: []byte("python")},
		{Path: "usr/bin/python3", Kind: layer.Symlink, Link: "python" + pyVersion},
		{Path: "usr/bin/stunnel", Kind: layer.File, Mode: 0o755, Data: []byte("stunnel")},
		{Path: "usr/sbin/mount.nfs", Kind: layer.File, Mode: 0o4755, Data: []byte("mount.nfs")},
		{Path: "usr/sbin/mount.nfs4", Kind: layer.Symlink, Link: "mount.nfs"},
	}
	var out []layer.Entry
	for _, e := range all {
		if !contains(without, e.Path) {
			out = append(out, e)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// writeBase writes an OCI layout holding one image index with an image per platform built from entries, and
// returns its "oci:" reference.
func writeBase(t *testing.T, entries []layer.Entry, platforms []platform.Platform) string {
	t.Helper()
	placed, err := layer.Place(entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := layer.NewCache(layer.Options{MTime: time.Unix(1, 0), CacheDir: t.TempDir()}).Build(placed)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := mutate.AppendLayers(empty.Image, res.Layer)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = p.OS, p.Arch
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "container=oci"}
		cf.Config.Labels = map[string]string{"name": "ubi9", "com.redhat.component": "ubi9-container"}
		cf.Config.Cmd = []string{"/bin/bash"}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	}
	dir := filepath.Join(t.TempDir(), "base")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: "9.6"})); err != nil {
		t.Fatal(err)
	}
	return "oci:" + dir
}

// project is a synthetic checkout: efs-utils sources with a layout.json, per-platform binaries and a wheel.
type project struct {
	efsUtils string
	bin      string
	wheels   []string
}

func newProject(t *testing.T) project {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"efs-utils/layout.json": `{"files": [
 {"src": "bin/mount.efs", "dest": "/sbin/mount.efs", "mode": "0755"},
 {"src": "dist/efs-utils.conf", "dest": "/etc/amazon/efs/efs-utils.conf", "mode": "0644"},
 {"src": "dist/efs-utils.crt", "dest": "/etc/amazon/efs/efs-utils.crt", "mode": "0444"}],
 "trees": [{"src": "efs_utils", "dest": "/usr/lib/aws-efs-utils/efs_utils", "mode": "0644", "exclude": ["*_test.py", "__pycache__"]}],
 "dirs": [{"dest": "/var/run/efs", "mode": "0755"}, {"dest": "/var/log/amazon/efs", "mode": "0700"}]}`,
		"efs-utils/bin/mount.efs":                 "#!/usr/bin/env python3\n",
		"efs-utils/dist/efs-utils.conf":           "[mount]\n",
		"efs-utils/dist/efs-utils.crt":            "-----BEGIN CERTIFICATE-----\n",
		"efs-utils/efs_utils/__init__.py":         "",
		"efs-utils/efs_utils/mount.py":            "# mount\n",
		"efs-utils/efs_utils/mount_test.py":       "# test\n",
		"efs-utils/efs_utils/__pycache__/x.pyc":   "pyc",
		"efs-utils/efs_utils/stunnel/__init__.py": "",
	}
	for _, p := range platform.Known() {
		files["bin/"+p.Dir()+"/"+Driver] = "driver for " + p.String()
		files["bin/"+p.Dir()+"/"+Operator] = "operator for " + p.String()
	}
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content)
	}
	w := wheeltest.Wheel{Project: "botocore", Version: "1.34.140", Files: map[string]string{
		"botocore/__init__.py": "__version__ = '1.34.140'\n", "botocore/data/endpoints.json": "{}\n"}}
	data := w.Bytes()
	wheelPath := filepath.Join(root, "wheels", w.Filename())
	writeFile(t, wheelPath, string(data))
	return project{
		efsUtils: filepath.Join(root, "efs-utils"),
		bin:      filepath.Join(root, "bin"),
		wheels:   []string{wheelPath},
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// options builds the three images of DefaultSpecs on local bases for every platform.
func options(t *testing.T, pr project, base, outDir string) Options {
	t.Helper()
	specs := DefaultSpecs(testVersions)
	specs[0].From = base
	specs[2].From = base
	return Options{
		OutDir:      outDir,
		BinDir:      pr.bin,
		EFSUtilsDir: pr.efsUtils,
		Wheels:      pr.wheels,
		Specs:       specs,
		Platforms:   platform.Known(),
		Stamps: map[string]stamp.Stamp{
			"driver":   {Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567"},
			"operator": {Version: "v0.4.0", Commit: "0123456789abcdef0123456789abcdef01234567"},
		},
		MTime: testTime,
		Jobs:  2,
	}
}

// startRegistry runs go-containerregistry's registry over real HTTP on loopback and returns its host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(nilLogger())))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func nilLogger() *log.Logger { return log.New(io.Discard, "", 0) }
