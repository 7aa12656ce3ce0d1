package olm

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
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

// Busybox is Debian's busybox-static (a static binary; testharness/pkg/testrun installs it): the cp of OLMImage,
// and the stand-in for Kubernetes' e2e test images (storagee2e).
const Busybox = "/bin/busybox"

// writeTagged writes img as a docker archive tagged ref to out, for images that pods name by tag.
func writeTagged(img v1.Image, ref, out string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, tag, img)
}

// bundleImage is a registry+v1 bundle image made from a bundle directory (manifests/ and metadata/), FROM
// scratch as operator-sdk builds them, with the annotations of metadata/annotations.yaml as labels.
func bundleImage(dir string, labels map[string]string) (v1.Image, error) {
	var files []localcluster.ImageFile
	for _, sub := range []string{"manifests", "metadata"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			return nil, fmt.Errorf("bundle directory %s: %w", dir, err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				files = append(files, localcluster.ImageFile{Path: "/" + sub + "/" + e.Name(), Source: filepath.Join(dir, sub, e.Name())})
			}
		}
	}
	return localcluster.FilesImage(files, localcluster.ImageConfig{Labels: labels})
}
