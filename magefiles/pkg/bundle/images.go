package bundle

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
)

// Image is one image the CSV refers to (operator/manifests/images.yaml).
type Image struct {
	// Placeholder is the CSV template's ${NAME} for the image's pull spec, also the operator's env var.
	Placeholder string `json:"placeholder"`
	// RelatedImage is the image's name in spec.relatedImages.
	RelatedImage string `json:"relatedImage"`
	// Built is the image's name in _output/images/digests.json when `mage images` builds it; empty otherwise.
	Built string `json:"built,omitempty"`
	// Development is the tag reference used when no digest is known.
	Development string `json:"development"`
}

var placeholderName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_IMAGE$`)

// ReadImages reads and checks the image list at path.
func ReadImages(path string) ([]Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Images []Image `json:"images"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Images) == 0 {
		return nil, fmt.Errorf("%s: no images: want a list under images:", path)
	}
	seen := map[string]bool{}
	for i, im := range doc.Images {
		where := fmt.Sprintf("%s: images[%d]", path, i)
		switch {
		case !placeholderName.MatchString(im.Placeholder):
			return nil, fmt.Errorf("%s: placeholder %q: want upper-case letters, digits and _ ending in _IMAGE", where, im.Placeholder)
		case seen[im.Placeholder]:
			return nil, fmt.Errorf("%s: placeholder %s is listed twice", where, im.Placeholder)
		case im.RelatedImage == "":
			return nil, fmt.Errorf("%s (%s): relatedImage is empty: want the name the CSV's relatedImages gives it", where, im.Placeholder)
		}
		if _, err := name.ParseReference(im.Development); err != nil {
			return nil, fmt.Errorf("%s (%s): development %q: want an image reference: %w", where, im.Placeholder, im.Development, err)
		}
		seen[im.Placeholder] = true
	}
	return doc.Images, nil
}

// PinsFileForm is the accepted form of a BUNDLE_IMAGES line, shown in errors.
const PinsFileForm = "PLACEHOLDER=<registry>/<repository>@sha256:<64 hex digits>"

// ParsePins reads a list of pinned images: one PLACEHOLDER=reference per line, blank lines and # comments
// allowed. Every reference must name a digest. source names the input in errors.
func ParsePins(source string, r io.Reader) (map[string]string, error) {
	pins := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, ref, ok := strings.Cut(line, "=")
		key, ref = strings.TrimSpace(key), strings.TrimSpace(ref)
		if !ok || !placeholderName.MatchString(key) {
			return nil, fmt.Errorf("%s line %d: %q: want %s", source, n, line, PinsFileForm)
		}
		if _, dup := pins[key]; dup {
			return nil, fmt.Errorf("%s line %d: %s is given twice", source, n, key)
		}
		d, err := name.NewDigest(ref)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %s %q is not pinned by digest: want %s: %w", source, n, key, ref, PinsFileForm, err)
		}
		pins[key] = d.String()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return pins, nil
}

// ReadDigests reads the digests.json of `mage images`; a missing file gives no digests.
func ReadDigests(path string) ([]imagebuild.Digest, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []imagebuild.Digest
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Sources of a resolved pull spec.
const (
	FromPins        = "BUNDLE_IMAGES"
	FromDigests     = "digests.json"
	FromDevelopment = "development tag"
)

// Resolved is an image with the pull spec the bundle uses.
type Resolved struct {
	Image
	// Ref is the pull spec written into the CSV.
	Ref string
	// Pinned is true when Ref names a digest.
	Pinned bool
	// From says where Ref came from (FromPins, FromDigests or FromDevelopment); Why explains an unpinned image.
	From string
	Why  string
}

// Resolve picks each image's pull spec: the pins first, then a pushed image of digests.json, then the
// development tag. A pin for an image the list does not know is an error.
func Resolve(images []Image, pins map[string]string, digests []imagebuild.Digest) ([]Resolved, error) {
	known := map[string]bool{}
	for _, im := range images {
		known[im.Placeholder] = true
	}
	var unknown []string
	for k := range pins {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, 0, len(images))
		for _, im := range images {
			names = append(names, im.Placeholder)
		}
		return nil, fmt.Errorf("BUNDLE_IMAGES pins %s, which the bundle does not use: want one of %s", strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	built := map[string]imagebuild.Digest{}
	for _, d := range digests {
		built[d.Name] = d
	}
	out := make([]Resolved, 0, len(images))
	for _, im := range images {
		r := Resolved{Image: im}
		d, isBuilt := built[im.Built]
		switch {
		case pins[im.Placeholder] != "":
			r.Ref, r.Pinned, r.From = pins[im.Placeholder], true, FromPins
		case im.Built != "" && isBuilt && d.Reference != "":
			r.Ref, r.Pinned, r.From = d.Reference, true, FromDigests
		default:
			r.Ref, r.From = im.Development, FromDevelopment
			r.Why = "not in BUNDLE_IMAGES"
			if im.Built != "" {
				r.Why += ", and `go tool mage images` has not pushed " + im.Built
				if isBuilt {
					r.Why += " (it was built but REGISTRY was not set)"
				}
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Unpinned returns the images resolved to a development tag.
func Unpinned(images []Resolved) []Resolved {
	var out []Resolved
	for _, r := range images {
		if !r.Pinned {
			out = append(out, r)
		}
	}
	return out
}
