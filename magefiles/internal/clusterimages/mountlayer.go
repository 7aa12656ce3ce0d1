package clusterimages

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/internal/layer"
	"github.com/openshift/aws-efs-csi/magefiles/internal/rootfs"
)

// mountHelper is the NFS helper's path: mount.efs runs /sbin/mount.nfs4 itself (as efs-utils 1.36 does), and
// mount(8) looks for mount.<type> helpers in /sbin. On a merged-/usr root /sbin is a link to usr/sbin, and
// layer.Place follows it, so the stand-in lands where the link leads, replacing that one file.
const mountHelper = "/sbin/mount.nfs4"

// MountStandInLayer is the test layer: the one entry replacing mount.nfs4, from the program file standIn.
const MountStandInLayer = "cluster test: mount.nfs4 stand-in"

// WithMountStandIn returns img plus exactly one layer that replaces mount.nfs4 with the program standIn (mode
// 0755), and env added to the config (entries with the same name replaced): the only differences between the
// driver image the cluster runs and the release's. The base must have mount.nfs4, so that the layer replaces
// the helper mount(8) really runs rather than adding one beside it. The layer is built through cache
// (reproducible, dated mtime).
func WithMountStandIn(img v1.Image, standIn string, env []string, cache *layer.Cache, mtime time.Time) (v1.Image, error) {
	fsys, err := rootfs.Read(img)
	if err != nil {
		return nil, err
	}
	if _, n, err := fsys.Resolve(mountHelper); err != nil || n.Kind != rootfs.File {
		return nil, fmt.Errorf("the driver image has no %s to replace (%v): its base must install it (Debian nfs-common, RPM nfs-utils)", mountHelper, err)
	}
	placed, err := layer.Place([]layer.Entry{{Path: mountHelper, Kind: layer.File, Mode: 0o755, Source: standIn}}, fsys)
	if err != nil {
		return nil, err
	}
	var files []layer.Entry
	for _, e := range placed {
		if e.Kind == layer.File {
			files = append(files, e)
		}
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("the mount.nfs4 stand-in layer would hold %d files; want only the helper", len(files))
	}
	res, err := cache.Build(files)
	if err != nil {
		return nil, err
	}
	out, err := mutate.Append(img, mutate.Addendum{
		Layer: res.Layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: mtime}, CreatedBy: MountStandInLayer + " at /" + files[0].Path},
	})
	if err != nil {
		return nil, err
	}
	if len(env) == 0 {
		return out, nil
	}
	cf, err := out.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Config.Env = mergeEnv(cf.Config.Env, env)
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
