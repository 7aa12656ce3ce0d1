package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/progress"
)

type writtenLayout struct {
	dir   string
	index v1.ImageIndex
}

// writeLayout makes outDir/<name> an OCI layout whose index.json lists exactly idx, tagged with its ref name.
// Blobs already in the layout are not written again and blobs no longer referenced are removed. When the layout
// already lists idx under that tag, nothing is written (changed is false).
func writeLayout(outDir, imageName, tag string, idx v1.ImageIndex) (writtenLayout, bool, error) {
	dir := filepath.Join(outDir, imageName)
	digest, err := idx.Digest()
	if err != nil {
		return writtenLayout{}, false, err
	}
	if p, err := layout.FromPath(dir); err == nil {
		if root, err := p.ImageIndex(); err == nil {
			if im, err := root.IndexManifest(); err == nil && len(im.Manifests) == 1 &&
				im.Manifests[0].Digest == digest && im.Manifests[0].Annotations[refNameAnnotation] == tag {
				if stored, err := root.ImageIndex(digest); err == nil {
					return writtenLayout{dir: dir, index: stored}, false, nil
				}
			}
		}
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return writtenLayout{}, false, fmt.Errorf("creating the OCI layout %s: %w", dir, err)
		}
	}
	if err := p.RemoveDescriptors(func(v1.Descriptor) bool { return true }); err != nil {
		return writtenLayout{}, false, err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: tag})); err != nil {
		return writtenLayout{}, false, fmt.Errorf("writing %s to the OCI layout %s: %w", imageName, dir, err)
	}
	unused, err := p.GarbageCollect()
	if err != nil {
		return writtenLayout{}, false, err
	}
	for _, h := range unused {
		if err := p.RemoveBlob(h); err != nil {
			return writtenLayout{}, false, err
		}
	}
	root, err := p.ImageIndex()
	if err != nil {
		return writtenLayout{}, false, err
	}
	stored, err := root.ImageIndex(digest)
	if err != nil {
		return writtenLayout{}, false, err
	}
	return writtenLayout{dir: dir, index: stored}, true, nil
}

// push uploads idx as <registry>/<name>:<tag>. Blobs and manifests the registry already has are not uploaded.
func push(ctx context.Context, res *Result, idx v1.ImageIndex, registry string, reg registryOptions, report *progress.Lines) error {
	repo := strings.TrimSuffix(registry, "/") + "/" + res.Name
	ref, err := name.NewTag(repo+":"+res.Tag, reg.nameOptions()...)
	if err != nil {
		return fmt.Errorf("REGISTRY %q: %s:%s is not a valid image reference: %w", registry, repo, res.Tag, err)
	}
	res.Reference = ref.Context().Name() + "@" + res.Digest.String()
	opts := reg.remoteOptions(ctx)
	if desc, err := remote.Head(ref, opts...); err == nil && desc.Digest == res.Digest {
		report.Printf("images: %s: %s already has %s, nothing pushed", res.Name, ref, short(res.Digest))
		return nil
	}
	before := reg.sent.Load()
	if err := remote.WriteIndex(ref, idx, opts...); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	res.Pushed, res.PushedBytes = true, reg.sent.Load()-before
	report.Printf("images: %s: pushed %s (%s, %s uploaded)", res.Name, ref, short(res.Digest), humanBytes(res.PushedBytes))
	return nil
}

// Digest is one image's entry in digests.json, which the bundle step reads.
type Digest struct {
	Name      string            `json:"name"`
	Tag       string            `json:"tag"`
	Digest    string            `json:"digest"`
	Reference string            `json:"reference,omitempty"`
	Platforms map[string]string `json:"platforms"`
}

// DigestsFile is the name of the file listing the digests of the last run, under the output directory.
const DigestsFile = "digests.json"

func writeDigests(outDir string, results []Result) error {
	var out []Digest
	for _, r := range results {
		d := Digest{Name: r.Name, Tag: r.Tag, Digest: r.Digest.String(), Reference: r.Reference, Platforms: map[string]string{}}
		for p, h := range r.Platforms {
			d.Platforms[p] = h.String()
		}
		out = append(out, d)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(outDir, DigestsFile), append(data, '\n'), 0o644)
}
