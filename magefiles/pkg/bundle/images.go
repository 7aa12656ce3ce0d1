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
	// Placeholder is the operator's env var for the image and the key of a BUNDLE_IMAGES line.
	Placeholder string `json:"placeholder"`
	// RelatedImage is the image's name in spec.relatedImages and in image-references.
	RelatedImage string `json:"relatedImage"`
	// Built is the image's name in _output/images/digests.json when `mage images` builds it; empty otherwise.
	Built string `json:"built,omitempty"`
	// DigestFrom says where the CSV's digest comes from: "nudge:<component>" or "payload:<name>".
	DigestFrom string `json:"digestFrom"`
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
		if kind, what, _ := strings.Cut(im.DigestFrom, ":"); (kind != DigestFromNudge && kind != DigestFromPayload) || what == "" {
			return nil, fmt.Errorf("%s (%s): digestFrom %q: want %s:<Konflux component> or %s:<release payload image name>", where, im.Placeholder, im.DigestFrom, DigestFromNudge, DigestFromPayload)
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

// Where the CSV's digest of an image comes from (Image.DigestFrom before the colon).
const (
	DigestFromNudge   = "nudge"
	DigestFromPayload = "payload"
)

// Sources of a resolved pull spec.
const (
	FromPins    = "BUNDLE_IMAGES"
	FromDigests = "digests.json"
	FromCSV     = "the CSV"
)

// Resolved is an image with the pull spec the bundle uses.
type Resolved struct {
	Image
	// Source is the reference the CSV source holds (replaced wherever it occurs); Ref the pull spec written in
	// its place.
	Source string
	Ref    string
	// From says where Ref came from (FromPins, FromDigests or FromCSV).
	From string
	// Unrecorded is why Ref is a placeholder digest (empty when it is a real one).
	Unrecorded string
}

// Resolve picks each image's pull spec: the pins first, then a pushed image of digests.json, then the CSV's own
// reference (source, by related image name) with its repository mapped from where Konflux builds it to where it is
// released (mirrors). A pin for an image the list does not know is an error, and so is an image the CSV lacks.
func Resolve(images []Image, source map[string]string, mirrors MirrorSet, pins map[string]string, digests []imagebuild.Digest) ([]Resolved, error) {
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
		src, ok := source[im.RelatedImage]
		if !ok {
			return nil, fmt.Errorf("%s: spec.relatedImages has no image named %s (%s of %s)", CSVFile, im.RelatedImage, im.Placeholder, ImagesFile)
		}
		r := Resolved{Image: im, Source: src}
		d, isBuilt := built[im.Built]
		switch {
		case pins[im.Placeholder] != "":
			r.Ref, r.From = pins[im.Placeholder], FromPins
		case im.Built != "" && isBuilt && d.Reference != "":
			r.Ref, r.From = d.Reference, FromDigests
		default:
			r.Ref, r.From = mirrors.Released(src), FromCSV
			r.Unrecorded = unrecorded(im, src)
		}
		out = append(out, r)
	}
	return out, nil
}

// PlaceholderDigest is the digest that marks a digest not recorded yet: all zeros, which no content has.
const PlaceholderDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// unrecorded says why ref is a placeholder, or "" when its digest is a real one.
func unrecorded(im Image, ref string) string {
	if !strings.HasSuffix(ref, "@"+PlaceholderDigest) {
		return ""
	}
	kind, what, _ := strings.Cut(im.DigestFrom, ":")
	if kind == DigestFromNudge {
		return "first push digest not recorded: the first push build of the Konflux component " + what + " nudges it"
	}
	return "payload digest not recorded: copy it from `oc adm release info --image-for=" + what + "` of the OpenShift release payload"
}

// Unrecorded returns the images whose pull spec is a placeholder digest.
func Unrecorded(images []Resolved) []Resolved {
	var out []Resolved
	for _, r := range images {
		if r.Unrecorded != "" {
			out = append(out, r)
		}
	}
	return out
}

// NotRecorded lists, for the repository at root, every image of the CSV whose digest is still the placeholder, one
// line each ("<relatedImage> <reference>: first push digest not recorded: ..."), for `go tool mage konflux`'s list
// of what cannot be checked offline.
func NotRecorded(root string) ([]string, error) {
	res, err := ResolveSources(SourcesIn(root), nil, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range Unrecorded(res) {
		out = append(out, fmt.Sprintf("%s %s (%s): %s", r.RelatedImage, r.Source, CSVFile, r.Unrecorded))
	}
	return out, nil
}
