package bundle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
)

// ReadAnnotations reads metadata/annotations.yaml of the bundle in dir.
func ReadAnnotations(dir string) (map[string]string, error) {
	p := filepath.Join(dir, "metadata", AnnotationsFile)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(doc.Annotations) == 0 {
		return nil, fmt.Errorf("%s: no annotations", p)
	}
	return doc.Annotations, nil
}

// TreeEntries lists the regular files under dir/sub... as layer entries at sub/<path>, mode 0644.
func TreeEntries(dir string, subs ...string) ([]layer.Entry, error) {
	var out []layer.Entry
	for _, sub := range subs {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("%s: not a regular file", p)
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, layer.Entry{Path: filepath.ToSlash(rel), Kind: layer.File, Mode: 0o644, Source: p})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ImageSpec is the bundle image: FROM scratch, manifests/ and metadata/ of the bundle in dir, and the bundle
// annotations as labels (what `opm` and OLM read), plus the Red Hat delivery label.
func ImageSpec(dir string) (imagebuild.Spec, error) {
	labels, err := ReadAnnotations(dir)
	if err != nil {
		return imagebuild.Spec{}, err
	}
	labels["com.redhat.delivery.operator.bundle"] = "true"
	files, err := TreeEntries(dir, "manifests", "metadata")
	if err != nil {
		return imagebuild.Spec{}, err
	}
	return imagebuild.Spec{
		Name: ImageName, From: "scratch", FromEnv: "(none: the bundle image is FROM scratch)", Module: "operator",
		Layers: []imagebuild.LayerSpec{{Name: "bundle", Kind: imagebuild.Files, Files: files}},
		Config: imagebuild.Config{
			DisplayName: "AWS EFS CSI Driver Operator bundle",
			Description: "The OLM registry+v1 bundle of the AWS EFS CSI Driver Operator.",
			Tags:        "aws,efs,csi,storage,operator,olm,bundle",
			Labels:      labels,
		},
	}, nil
}

func buildImage(ctx context.Context, opts Options) (imagebuild.Result, error) {
	spec, err := ImageSpec(opts.OutDir)
	if err != nil {
		return imagebuild.Result{}, err
	}
	return imagebuild.RunOne(ctx, imagebuild.Options{
		OutDir: opts.ImageOutDir, Platforms: opts.Platforms,
		Stamps: map[string]stamp.Stamp{"operator": opts.Stamp}, MTime: opts.MTime,
		Registry: opts.Registry, Tag: opts.Tag, Insecure: opts.Insecure, Keychain: opts.Keychain, Transport: opts.Transport,
		Jobs: 1, Progress: opts.Progress,
	}, spec)
}
