package localcluster

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const testDigest = "sha256:2ac1a7343ceba4e966440328956fa62e07420ab283f625bdbd7ba1b7aee5b152"

func writeManifest(t *testing.T, dir string, names ...string) {
	t.Helper()
	var m manifest
	m.Platform = "linux/amd64"
	for _, n := range names {
		m.Images = append(m.Images, struct {
			Name   string `json:"name"`
			Layout string `json:"layout"`
			Tag    string `json:"tag"`
			Digest string `json:"digest"`
		}{n, n, "v0.1.0", testDigest})
	}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, imagesManifest), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadProjectImages(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, efsUtilsBaseImage, driverImage, operatorImage, driverForClusterImage)
	got, err := ReadProjectImages(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Driver.Reference != "localhost/aws-efs-csi/aws-efs-csi-driver-for-cluster:v0.1.0" ||
		got.Operator.Reference != "localhost/aws-efs-csi/aws-efs-csi-driver-operator:v0.1.0" ||
		got.EFSUtilsBase.Layout != filepath.Join(dir, efsUtilsBaseImage) {
		t.Errorf("ReadProjectImages = %+v", got)
	}
	if p := got.Driver.Pinned(); p != "localhost/aws-efs-csi/aws-efs-csi-driver-for-cluster@"+testDigest {
		t.Errorf("Pinned = %s", p)
	}
	if n := len(got.All()); n != 4 {
		t.Errorf("All lists %d images; want 4", n)
	}

	// Without the mount.nfs4 stand-in there is no driver for the cluster; every release image must be there.
	writeManifest(t, dir, efsUtilsBaseImage, driverImage, operatorImage)
	if got, err := ReadProjectImages(dir); err != nil || got.Driver.Reference != "" || len(got.All()) != 3 {
		t.Errorf("without the driver for the cluster: %+v, %v", got, err)
	}
	writeManifest(t, dir, efsUtilsBaseImage, driverImage)
	if _, err := ReadProjectImages(dir); err == nil || !strings.Contains(err.Error(), operatorImage) {
		t.Errorf("a manifest without the operator: %v; want an error naming it", err)
	}
	if _, err := ReadProjectImages(""); err == nil || !strings.Contains(err.Error(), ImagesDirEnv) || !strings.Contains(err.Error(), "cluster:images") {
		t.Errorf("no directory: %v; want the variable and the target named", err)
	}
}

// The archive ctr imports is the layout with index.json naming only the image, for containerd.
func TestLayoutArchiveNamesTheImageForContainerd(t *testing.T) {
	layout := t.TempDir()
	d, _ := v1.NewHash(testDigest)
	idx := v1.IndexManifest{SchemaVersion: 2, Manifests: []v1.Descriptor{
		{MediaType: "application/vnd.oci.image.index.v1+json", Digest: d, Size: 10, Annotations: map[string]string{"org.opencontainers.image.ref.name": "v0.1.0"}},
	}}
	b, _ := json.Marshal(idx)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(layout, "index.json"), b, 0o644))
	must(os.WriteFile(filepath.Join(layout, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644))
	must(os.MkdirAll(filepath.Join(layout, "blobs", "sha256"), 0o755))
	must(os.WriteFile(filepath.Join(layout, "blobs", "sha256", d.Hex), []byte("0123456789"), 0o644))
	img := ProjectImage{Reference: "localhost/aws-efs-csi/aws-efs-csi-driver:v0.1.0", Digest: d, Layout: layout}
	index, err := archiveIndex(img)
	must(err)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeLayoutArchive(pw, layout, index)) }()
	tr := tar.NewReader(pr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(err)
		body, _ := io.ReadAll(tr)
		if _, dup := files[h.Name]; dup {
			t.Errorf("%s twice in the archive", h.Name)
		}
		files[h.Name] = string(body)
	}
	if files["blobs/sha256/"+d.Hex] != "0123456789" || files["oci-layout"] == "" {
		t.Errorf("archive lacks the layout's files: %v", files)
	}
	var got v1.IndexManifest
	must(json.Unmarshal([]byte(files["index.json"]), &got))
	if len(got.Manifests) != 2 || got.Manifests[0].Digest != d || got.Manifests[1].Digest != d ||
		got.Manifests[0].Annotations["io.containerd.image.name"] != img.Reference ||
		got.Manifests[1].Annotations["io.containerd.image.name"] != "localhost/aws-efs-csi/aws-efs-csi-driver@"+testDigest {
		t.Errorf("archive index.json = %s; want the image named %s and by its digest", files["index.json"], img.Reference)
	}
	img.Digest, _ = v1.NewHash("sha256:" + strings.Repeat("0", 64))
	if _, err := archiveIndex(img); err == nil {
		t.Error("archiveIndex found a digest the layout does not list")
	}
}
