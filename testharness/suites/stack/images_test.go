package stack

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWriteArchiveNamesTheImageByItsDigest(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ImagesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := binaryImage(bin, "/usr/bin/csi-provisioner")
	if err != nil {
		t.Fatal(err)
	}
	im, err := writeArchive(dir, "PROVISIONER_IMAGE", img)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	if want := "localhost/aws-efs-csi-e2e/provisioner@" + digest.String(); im.Ref != want {
		t.Errorf("Ref = %s, want %s", im.Ref, want)
	}
	files := readTar(t, im.Archive)
	var index struct {
		Manifests []struct {
			Digest      string
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != digest.String() || index.Manifests[0].Annotations["io.containerd.image.name"] != im.Ref {
		t.Errorf("index.json = %s; want one manifest %s named %s for containerd", files["index.json"], digest, im.Ref)
	}
	if _, ok := files["blobs/sha256/"+digest.Hex]; !ok {
		t.Errorf("archive lacks the manifest blob; files: %v", keys(files))
	}

	cfg, _ := img.ConfigFile()
	if !reflect.DeepEqual(cfg.Config.Entrypoint, []string{"/usr/bin/csi-provisioner"}) {
		t.Errorf("config entrypoint %v", cfg.Config.Entrypoint)
	}
	layers, _ := img.Layers()
	rc, _ := layers[0].Uncompressed()
	defer rc.Close()
	var entries []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, h.Name+" "+h.Linkname)
	}
	want := []string{"usr/ ", "usr/bin/ ", "usr/bin/csi-provisioner "}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("layer entries %q, want %q", entries, want)
	}
}

func TestPinsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	images := []Image{
		{Placeholder: "TOOLS_IMAGE", Ref: "localhost/aws-efs-csi-e2e/tools@sha256:" + strings.Repeat("b", 64)},
		{Placeholder: "DRIVER_IMAGE", Ref: "localhost/aws-efs-csi-e2e/driver@sha256:" + strings.Repeat("a", 64)},
	}
	if err := WritePins(filepath.Join(dir, PinsFile), images); err != nil {
		t.Fatal(err)
	}
	// The sidecars have archives; the project's images (here the driver) are loaded from their layouts.
	if err := os.MkdirAll(filepath.Join(dir, ImagesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ImagesDir, "TOOLS_IMAGE.tar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadImages(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Image{
		{Placeholder: "DRIVER_IMAGE", Ref: images[1].Ref},
		{Placeholder: "TOOLS_IMAGE", Ref: images[0].Ref, Archive: filepath.Join(dir, ImagesDir, "TOOLS_IMAGE.tar")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadImages = %+v, want %+v (sorted by placeholder)", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, PinsFile), []byte("no equals sign\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadImages(dir); err == nil || !strings.Contains(err.Error(), "want PLACEHOLDER=<reference>") {
		t.Errorf("ReadImages of a bad line: %v", err)
	}
}

func readTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = b
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
