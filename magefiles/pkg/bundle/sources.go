package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// Files of operator/manifests besides the CSV that describe the bundle rather than being part of it.
const (
	// ImageReferencesFile lists the CSV's images in ART's ImageStream form.
	ImageReferencesFile = "image-references"
	// ArtFile holds the version rewrites of a build, in ART's form.
	ArtFile = "art.yaml"
)

// MirrorSetFile is the ImageDigestMirrorSet, below the repository root, that maps the registry each image is
// released to (source) to where Konflux builds it (mirrors).
const MirrorSetFile = ".tekton/images-mirror-set.yaml"

// MirrorSet maps released repositories (sources) to the repositories they are built in (mirrors).
type MirrorSet struct {
	// Mirrors are source repository -> its mirror repositories.
	Mirrors map[string][]string
}

// ReadMirrorSet reads an ImageDigestMirrorSet (config.openshift.io/v1).
func ReadMirrorSet(path string) (MirrorSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return MirrorSet{}, err
	}
	var doc struct {
		Kind string `json:"kind"`
		Spec struct {
			ImageDigestMirrors []struct {
				Source  string   `json:"source"`
				Mirrors []string `json:"mirrors"`
			} `json:"imageDigestMirrors"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return MirrorSet{}, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Kind != "ImageDigestMirrorSet" {
		return MirrorSet{}, fmt.Errorf("%s: kind %q: want ImageDigestMirrorSet", path, doc.Kind)
	}
	ms := MirrorSet{Mirrors: map[string][]string{}}
	for i, m := range doc.Spec.ImageDigestMirrors {
		if _, err := name.NewRepository(m.Source); err != nil || len(m.Mirrors) == 0 {
			return MirrorSet{}, fmt.Errorf("%s: spec.imageDigestMirrors[%d]: source %q with mirrors %v: want a repository and at least one mirror", path, i, m.Source, m.Mirrors)
		}
		ms.Mirrors[m.Source] = m.Mirrors
	}
	return ms, nil
}

// Released returns ref with its repository replaced by the source whose mirror it is (the registry the image is
// released to), keeping the digest; a reference that is no mirror is returned unchanged. This is the rewrite
// Konflux's run-opm-command task makes with the same file (replace_mirror_pullspec_with_source).
func (m MirrorSet) Released(ref string) string {
	repo, rest, ok := strings.Cut(ref, "@")
	if !ok {
		return ref
	}
	for src, mirrors := range m.Mirrors {
		for _, mirror := range mirrors {
			if repo == mirror {
				return src + "@" + rest
			}
		}
	}
	return ref
}

// Source returns the released repository whose mirror mirrorRepo is.
func (m MirrorSet) Source(mirrorRepo string) (string, bool) {
	for src, mirrors := range m.Mirrors {
		for _, mirror := range mirrors {
			if mirror == mirrorRepo {
				return src, true
			}
		}
	}
	return "", false
}

// CSVImages reads spec.relatedImages of the CSV at path: related image name -> reference.
func CSVImages(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var csv struct {
		Spec struct {
			RelatedImages []struct {
				Name  string `json:"name"`
				Image string `json:"image"`
			} `json:"relatedImages"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &csv); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for i, ri := range csv.Spec.RelatedImages {
		if _, err := name.NewDigest(ri.Image); err != nil {
			return nil, fmt.Errorf("%s: spec.relatedImages[%d] (%s) %q: want <repository>@sha256:<digest> (the form Konflux nudges rewrite): %w", path, i, ri.Name, ri.Image, err)
		}
		out[ri.Name] = ri.Image
	}
	return out, nil
}

// ImageReferences reads an image-references file (an ImageStream): tag name -> from.name.
func ImageReferences(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var is struct {
		Kind string `json:"kind"`
		Spec struct {
			Tags []struct {
				Name string `json:"name"`
				From struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"from"`
			} `json:"tags"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &is); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if is.Kind != "ImageStream" {
		return nil, fmt.Errorf("%s: kind %q: want ImageStream", path, is.Kind)
	}
	out := map[string]string{}
	for i, t := range is.Spec.Tags {
		if t.From.Kind != "DockerImage" {
			return nil, fmt.Errorf("%s: spec.tags[%d] (%s): from.kind %q: want DockerImage", path, i, t.Name, t.From.Kind)
		}
		out[t.Name] = t.From.Name
	}
	return out, nil
}

// ArtUpdate is one search/replace of art.yaml.
type ArtUpdate struct {
	Search  string `json:"search"`
	Replace string `json:"replace"`
}

// ReadArt reads art.yaml: file (relative to art.yaml) -> its updates, in order.
func ReadArt(path string) (map[string][]ArtUpdate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Updates []struct {
			File       string      `json:"file"`
			UpdateList []ArtUpdate `json:"update_list"`
		} `json:"updates"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string][]ArtUpdate{}
	for _, u := range doc.Updates {
		out[filepath.Clean(u.File)] = append(out[filepath.Clean(u.File)], u.UpdateList...)
	}
	return out, nil
}

// ApplyArt applies updates to data for the build version fullVer ({FULL_VER}); {MAJOR} and {MINOR} are those of
// fullVer. Every search string must occur (ART's rewrite would silently miss it otherwise). file names data in
// errors.
func ApplyArt(file string, data []byte, updates []ArtUpdate, fullVer string) ([]byte, error) {
	parts := strings.SplitN(fullVer, ".", 3)
	if len(parts) < 3 {
		return nil, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH[-PRERELEASE]", fullVer)
	}
	vars := strings.NewReplacer("{FULL_VER}", fullVer, "{MAJOR}", parts[0], "{MINOR}", parts[1])
	s := string(data)
	for _, u := range updates {
		search := vars.Replace(u.Search)
		if !strings.Contains(s, search) {
			return nil, fmt.Errorf("%s: %s search %q is not in the file: change %s with the CSV", file, ArtFile, search, ArtFile)
		}
		s = strings.ReplaceAll(s, search, vars.Replace(u.Replace))
	}
	return []byte(s), nil
}
