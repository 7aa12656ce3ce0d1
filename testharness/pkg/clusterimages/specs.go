// Package clusterimages builds the project's images for the local cluster (testharness/suites/localcluster): the
// release's efs-utils base, driver and operator images, assembled by imagebuild from the release's specs on the
// Debian root that stands in for RHEL 9 (standinroot), for linux/amd64; and the driver image the cluster runs,
// which is the release driver image plus one layer replacing only mount.nfs4 with the NFS stand-in (this kernel
// has no NFS client). It writes one OCI layout per image and a manifest (images.json) that the cluster tests
// read through ImagesDirEnv.
package clusterimages

import (
	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// Platform is the only platform the local cluster runs.
var Platform = platform.Platform{OS: "linux", Arch: "amd64"}

// DriverForCluster is the name of the driver image the cluster runs (layout directory and manifest key).
const DriverForCluster = imagebuild.Driver + "-for-cluster"

// Specs are the release's image specs (imagebuild.DefaultSpecs) with the efs-utils base and the operator on the
// stand-in root, given as the images target's environment would give them (AWS_EFS_UTILS_BASE_FROM,
// AWS_EFS_CSI_DRIVER_OPERATOR_FROM = rootfs:linux/amd64=<tarball>); the driver stays on the efs-utils base of the
// same run. One thing differs from a release: the efs-utils base has no botocore wheel layer. The release builds
// botocore from its pinned sdist, which PyPI would serve and this machine cannot reach; the stand-in root has
// Debian's python3-botocore instead (Debian's Python reads /usr/lib/python3/dist-packages, and would not even see
// the release layer's /usr/local/lib/python3.N/site-packages, RHEL's pip prefix).
func Specs(v versions.Versions, rootTar string) []imagebuild.Spec {
	base := "rootfs:" + Platform.String() + "=" + rootTar
	specs := imagebuild.DefaultSpecs(v)
	settings := imagebuild.Settings{From: map[string]string{}}
	for _, s := range specs {
		if s.FromEnv == "AWS_EFS_UTILS_BASE_FROM" || s.FromEnv == "AWS_EFS_CSI_DRIVER_OPERATOR_FROM" {
			settings.From[s.Name] = base
		}
	}
	specs = settings.WithBases(specs)
	for i := range specs {
		var kept []imagebuild.LayerSpec
		for _, l := range specs[i].Layers {
			if l.Kind != imagebuild.Wheels {
				kept = append(kept, l)
			}
		}
		specs[i].Layers = kept
	}
	return specs
}
