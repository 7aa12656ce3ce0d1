package olm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

// layoutRef is the reference by digest an OCI image layout's (first) image or index gets in repo: what a catalog
// pins a bundle by (`go tool mage bundle` writes the bundle image as a layout in _output/bundle-image/<name>).
func layoutRef(layoutDir, repo string) (string, error) {
	p, err := layout.FromPath(layoutDir)
	if err != nil {
		return "", err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return "", err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	if len(m.Manifests) == 0 {
		return "", fmt.Errorf("OCI layout %s holds no image", layoutDir)
	}
	return repo + "@" + m.Manifests[0].Digest.String(), nil
}

// LoadLayout imports the first image or index of an OCI image layout into the cluster's containerd under
// layoutRef, so that OLM's bundle unpack Job finds it (OLM pulls a bundle named by digest IfNotPresent). work
// is a scratch directory.
func LoadLayout(ctx context.Context, c *localcluster.Cluster, layoutDir, repo, work string) (string, error) {
	ref, err := layoutRef(layoutDir, repo)
	if err != nil {
		return "", err
	}
	p, err := layout.FromPath(layoutDir)
	if err != nil {
		return "", err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return "", err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	desc := m.Manifests[0]
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	lay, err := os.MkdirTemp(work, "layout-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(lay)
	out, err := layout.Write(lay, empty.Index)
	if err != nil {
		return "", err
	}
	// containerd names an imported image after this annotation of its entry in index.json.
	name := layout.WithAnnotations(map[string]string{"io.containerd.image.name": ref})
	switch desc.MediaType {
	case types.OCIImageIndex, types.DockerManifestList:
		child, err := idx.ImageIndex(desc.Digest)
		if err != nil {
			return "", err
		}
		err = out.AppendIndex(child, name)
		if err != nil {
			return "", err
		}
	default:
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return "", err
		}
		if err := out.AppendImage(img, name); err != nil {
			return "", err
		}
	}
	archive := filepath.Join(work, filepath.Base(layoutDir)+".tar")
	if err := localcluster.TarDir(lay, archive); err != nil {
		return "", err
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		return "", err
	}
	return ref, nil
}
