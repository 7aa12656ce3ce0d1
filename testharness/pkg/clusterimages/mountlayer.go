package clusterimages

import (
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/rootfs"
)

// mountHelper is the NFS helper's path: mount.efs runs /sbin/mount.nfs4 itself (as efs-utils 1.36 does), and
// mount(8) looks for mount.<type> helpers in /sbin. On a merged-/usr root /sbin is a link to usr/sbin, and
// layer.Place follows it, so the stand-in lands where the link leads, replacing that one file.
const mountHelper = "/sbin/mount.nfs4"

// MountStandInLayer is the test layer: the entry replacing mount.nfs4, with a test CA the one replacing the
// image's efs-utils.crt, and the NFS client's files.
const MountStandInLayer = "cluster test: mount.nfs4 stand-in"

// caFile is the CA bundle the driver copies from the image's efs-utils static files into efs-utils' configuration
// directory at start (always, so that an image update brings a new bundle), and that stunnel verifies EFS mount
// targets with (efs-utils' stunnel_cafile).
var caFile = path.Join(imagebuild.StaticFilesDir, "efs-utils.crt")

// TestLayer is what the driver image the cluster runs adds to the release's driver image.
type TestLayer struct {
	// MountStandIn is the program file that replaces mount.nfs4 (mode 0755).
	MountStandIn string
	// CAFile, when set, is the PEM file of the test CA that signs efs-standin's mount targets; it replaces the
	// image's efs-utils.crt (mode 0644), so that stunnel verifies the stand-in mount targets the way it verifies
	// EFS's, with no mount option.
	CAFile string
	// NFSClient are host files of the NFS client the mount.nfs4 stand-in talks NFS with (NFSClientFiles), copied
	// into the image at the same paths with their modes; the base must not have them.
	NFSClient []string
	// Env entries are added to the config (entries with the same name replaced).
	Env []string
}

// NFSClientFiles are libnfs' nfs-ls and its library on this machine (Debian's libnfs-utils and libnfs13, of the
// same Debian release as the stand-in root): the mount.nfs4 stand-in lists each directory over NFSv4 through the
// TLS relay before it mounts it (driver/test/realnfs). The library's link is read through, so the image gets the
// file under its soname, where the dynamic loader looks.
var NFSClientFiles = []string{"/usr/bin/nfs-ls", "/usr/lib/x86_64-linux-gnu/libnfs.so.13"}

// WithTestLayer returns img plus exactly one layer with the files of tl, and tl.Env added to the config: the only
// differences between the driver image the cluster runs and the release's. The base must have mount.nfs4 (and
// efs-utils.crt when tl.CAFile is set), so that the layer replaces the files the driver really uses rather than
// adding others beside them. The layer is built through cache (reproducible, dated mtime).
func WithTestLayer(img v1.Image, tl TestLayer, cache *layer.Cache, mtime time.Time) (v1.Image, error) {
	fsys, err := rootfs.Read(img)
	if err != nil {
		return nil, err
	}
	if _, n, err := fsys.Resolve(mountHelper); err != nil || n.Kind != rootfs.File {
		return nil, fmt.Errorf("the driver image has no %s to replace (%v): its base must install it (Debian nfs-common, RPM nfs-utils)", mountHelper, err)
	}
	entries := []layer.Entry{{Path: mountHelper, Kind: layer.File, Mode: 0o755, Source: tl.MountStandIn}}
	if tl.CAFile != "" {
		if _, n, err := fsys.Resolve(caFile); err != nil || n.Kind != rootfs.File {
			return nil, fmt.Errorf("the driver image has no %s to replace with the test CA (%v): it is the release driver image's efs-utils static files", caFile, err)
		}
		entries = append(entries, layer.Entry{Path: caFile, Kind: layer.File, Mode: 0o644, Source: tl.CAFile})
	}
	for _, f := range tl.NFSClient {
		if _, _, err := fsys.Resolve(f); err == nil {
			return nil, fmt.Errorf("the driver image already has %s: the NFS client of the test layer would replace it", f)
		}
		st, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("the NFS client of the test layer: %w (install Debian's libnfs-utils)", err)
		}
		entries = append(entries, layer.Entry{Path: f, Kind: layer.File, Mode: int64(st.Mode().Perm()), Source: f})
	}
	placed, err := layer.Place(entries, fsys)
	if err != nil {
		return nil, err
	}
	var files []layer.Entry
	var paths []string
	for _, e := range placed {
		if e.Kind == layer.File {
			files = append(files, e)
			paths = append(paths, "/"+e.Path)
		}
	}
	if len(files) != len(entries) {
		return nil, fmt.Errorf("the test layer would hold %d files %v; want exactly %d (mount.nfs4, the test CA and the NFS client)", len(files), paths, len(entries))
	}
	res, err := cache.Build(files)
	if err != nil {
		return nil, err
	}
	out, err := mutate.Append(img, mutate.Addendum{
		Layer: res.Layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: mtime}, CreatedBy: MountStandInLayer + " at " + strings.Join(paths, ", ")},
	})
	if err != nil {
		return nil, err
	}
	if len(tl.Env) == 0 {
		return out, nil
	}
	cf, err := out.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Config.Env = mergeEnv(cf.Config.Env, tl.Env)
	return mutate.ConfigFile(out, cf)
}

// mergeEnv replaces entries of base by name and appends the new names in the order given.
func mergeEnv(base, over []string) []string {
	out := append([]string(nil), base...)
	for _, kv := range over {
		name, _, _ := strings.Cut(kv, "=")
		replaced := false
		for j, b := range out {
			if n, _, _ := strings.Cut(b, "="); n == name {
				out[j], replaced = kv, true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}
