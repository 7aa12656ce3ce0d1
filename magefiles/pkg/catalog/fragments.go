package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/lib/config"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
)

// The catalog fragments Konflux ships, one per OpenShift version, as OpenShift's file-based catalog repositories
// keep them: images/aws-efs-csi-driver-operator-catalog/v<OpenShift version>/ holds the version's basic template
// (TemplateFile, the source a person edits and the bundle's nudge rewrites) and the catalog rendered from it
// (catalog/<package>/catalog.yaml, committed, what the version's catalog component COPYs into its image). The
// rendered catalog can only come from the pushed bundle image (RenderFragment pulls it), so it is absent until the
// bundle component's first push; FragmentStatus reports that and a catalog older than its template.

// FragmentsDir is the folder of the per-version catalog fragments, below the repository root.
const FragmentsDir = "images/aws-efs-csi-driver-operator-catalog"

// ComponentPrefix starts the name of every per-version catalog component: <prefix>-v4-18 for OpenShift 4.18
// (Konflux component names are DNS labels: no dots).
const ComponentPrefix = ImageName

// ComponentFor is the Konflux component that builds the catalog of OpenShift version ocp ("4.18").
func ComponentFor(ocp string) string {
	return ComponentPrefix + "-v" + strings.ReplaceAll(ocp, ".", "-")
}

// VersionOfComponent is the OpenShift version of a per-version catalog component ("" for any other component).
func VersionOfComponent(component string) string {
	rest, ok := strings.CutPrefix(component, ComponentPrefix+"-v")
	if !ok {
		return ""
	}
	v := strings.Replace(rest, "-", ".", 1)
	if _, err := parseVersion(v); err != nil {
		return ""
	}
	return v
}

// FragmentDir is the folder of OpenShift version ocp's fragment, relative to the repository root.
func FragmentDir(ocp string) string { return FragmentsDir + "/v" + ocp }

// TemplatePath is the basic template of OpenShift version ocp, relative to the repository root.
func TemplatePath(ocp string) string { return FragmentDir(ocp) + "/" + TemplateFile }

// RenderedDir is the rendered catalog of OpenShift version ocp (opm's layout, <package>/catalog.yaml inside),
// relative to the repository root: what the catalog Containerfile copies to /configs.
func RenderedDir(ocp string) string { return FragmentDir(ocp) + "/catalog" }

// OPMBase is the opm image the catalog of OpenShift version ocp is served from, given the one of the versions
// file (OPERATOR_REGISTRY_IMAGE, the operator-registry image of OPENSHIFT_VERSION): the same repository with tag
// v<ocp>, as Konflux's validate-fbc reads the catalog's target version from its base. OpenShift delivers that image
// as openshift4/ose-operator-registry-rhel9 from 4.15 on, 5.0 included, and for 4.14 only as the RHEL 8
// openshift4/ose-operator-registry (delivery_repo_names of images/operator-registry.yml in
// openshift-eng/ocp-build-data, branches openshift-4.14@13bebae9955c, openshift-4.15@4dbe9b31f641 ...
// openshift-5.0@9d85a7d93306); both are among validate-fbc's allowed base images
// (konflux-ci/konflux-operator-tasks@dee7049 task/validate-fbc/0.2, ALLOWED_BASE_IMAGES).
func OPMBase(operatorRegistryImage, ocp string) (string, error) {
	v, err := parseVersion(ocp)
	if err != nil {
		return "", err
	}
	tag, err := name.NewTag(operatorRegistryImage)
	if err != nil {
		return "", fmt.Errorf("OPERATOR_REGISTRY_IMAGE %q: want <repository>:v<OpenShift version>: %w", operatorRegistryImage, err)
	}
	repo := tag.Context().Name()
	if v[0] == 4 && v[1] <= rhel8OnlyOPMThrough {
		repo = strings.TrimSuffix(repo, "-rhel9")
	}
	return repo + ":v" + ocp, nil
}

// rhel8OnlyOPMThrough is the last OpenShift 4 minor whose operator-registry image is RHEL 8 only (see OPMBase).
const rhel8OnlyOPMThrough = 14

func parseVersion(ocp string) ([2]int, error) {
	major, minor, ok := strings.Cut(ocp, ".")
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || strconv.Itoa(a)+"."+strconv.Itoa(b) != ocp {
		return [2]int{}, fmt.Errorf("OpenShift version %q: want MAJOR.MINOR", ocp)
	}
	return [2]int{a, b}, nil
}

// Versions lists the OpenShift versions that have a catalog fragment (a v<version>/catalog-template.yaml under
// FragmentsDir of root), oldest first.
func Versions(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, FragmentsDir))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		v, ok := strings.CutPrefix(e.Name(), "v")
		if !e.IsDir() || !ok {
			continue
		}
		if _, err := parseVersion(v); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", FragmentsDir, e.Name(), err)
		}
		if _, err := os.Stat(filepath.Join(root, TemplatePath(v))); err != nil {
			return nil, fmt.Errorf("%s/%s: no %s: %w", FragmentsDir, e.Name(), TemplateFile, err)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := parseVersion(out[i])
		b, _ := parseVersion(out[j])
		return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no v<OpenShift version>/%s", FragmentsDir, TemplateFile)
	}
	return out, nil
}

// ErrBundleNotPushed is returned when a template still names the bundle by the all-zero placeholder digest.
var ErrBundleNotPushed = errors.New("the bundle's first push digest is not recorded")

// RenderFragment renders OpenShift version ocp's template of root into its committed catalog, pulling the bundle
// through reg: RenderTemplate at the version's migrate level with the mirror set of root, validated as `opm
// validate` does, and written in opm's layout only when valid. A template that still names the placeholder digest
// is refused (ErrBundleNotPushed): no catalog is rendered from an image that does not exist.
func RenderFragment(ctx context.Context, root, ocp string, reg image.Registry) (string, error) {
	tmpl := filepath.Join(root, TemplatePath(ocp))
	images, err := TemplateBundleImages(tmpl)
	if err != nil {
		return "", err
	}
	for _, im := range images {
		if strings.HasSuffix(im, "@"+bundle.PlaceholderDigest) {
			return "", fmt.Errorf("%s: olm.bundle image %s: %w (the all-zero placeholder); the bundle component's first push build nudges it (docs/release.md#catalogs)", TemplatePath(ocp), im, ErrBundleNotPushed)
		}
	}
	level, err := MigrateLevelFor(ocp)
	if err != nil {
		return "", err
	}
	mirrors, err := bundle.ReadMirrorSet(filepath.Join(root, bundle.MirrorSetFile))
	if err != nil {
		return "", err
	}
	cfg, err := RenderTemplate(ctx, tmpl, reg, level, mirrors)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, RenderedDir(ocp))
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), ".catalog-stage-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	if err := declcfg.WriteFS(*cfg, stage, declcfg.WriteYAML, ".yaml"); err != nil {
		return "", err
	}
	if err := config.Validate(ctx, os.DirFS(stage)); err != nil {
		return "", fmt.Errorf("%s: the rendered catalog is not valid: %w", TemplatePath(ocp), err)
	}
	if err := Resolvable(*cfg); err != nil {
		return "", fmt.Errorf("%s: OLM could not use the rendered catalog: %w", TemplatePath(ocp), err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return RenderedDir(ocp), os.Rename(stage, dir)
}

// RenderFragments renders every version's fragment of root (RenderFragment), reporting each on progress. It
// renders nothing when any template still names the placeholder, and says which.
func RenderFragments(ctx context.Context, root string, reg image.Registry, progress io.Writer) error {
	versions, err := Versions(root)
	if err != nil {
		return err
	}
	var pending []string
	for _, v := range versions {
		images, err := TemplateBundleImages(filepath.Join(root, TemplatePath(v)))
		if err != nil {
			return err
		}
		for _, im := range images {
			if strings.HasSuffix(im, "@"+bundle.PlaceholderDigest) {
				pending = append(pending, TemplatePath(v))
			}
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("%w in %s: nothing rendered; the bundle component's first push build nudges the templates, then render (docs/release.md#catalogs)", ErrBundleNotPushed, strings.Join(pending, ", "))
	}
	for _, v := range versions {
		dir, err := RenderFragment(ctx, root, v, reg)
		if err != nil {
			return err
		}
		fmt.Fprintf(progress, "catalog: OpenShift %s: %s rendered into %s\n", v, TemplatePath(v), dir)
	}
	return nil
}

// FragmentStatus lists what keeps root's committed catalogs from being what Konflux should ship, one line per
// version: a catalog not rendered yet, or one whose olm.bundle digests are not its template's (the template was
// nudged or edited after the render), or one that `opm validate` refuses. None means every version's catalog is
// the render of its template. It never needs a registry.
func FragmentStatus(ctx context.Context, root string) ([]string, error) {
	versions, err := Versions(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range versions {
		want, err := TemplateBundleImages(filepath.Join(root, TemplatePath(v)))
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(root, RenderedDir(v))
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			out = append(out, fmt.Sprintf("%s: catalog not rendered (no %s): %s, then commit it (docs/release.md#catalogs)", FragmentDir(v), RenderedDir(v), renderHint(want)))
			continue
		}
		if err := config.Validate(ctx, os.DirFS(dir)); err != nil {
			out = append(out, fmt.Sprintf("%s: opm validate refuses the committed catalog: %v", RenderedDir(v), err))
			continue
		}
		cfg, err := declcfg.LoadFS(ctx, os.DirFS(dir))
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", RenderedDir(v), err))
			continue
		}
		var have []string
		for _, b := range cfg.Bundles {
			have = append(have, digestOf(b.Image))
		}
		var wantDigests []string
		for _, im := range want {
			wantDigests = append(wantDigests, digestOf(im))
		}
		sort.Strings(have)
		sort.Strings(wantDigests)
		if strings.Join(have, ",") != strings.Join(wantDigests, ",") {
			out = append(out, fmt.Sprintf("%s: stale: its olm.bundle digests %v are not the template's %v: %s", RenderedDir(v), have, wantDigests, renderHint(want)))
		}
	}
	return out, nil
}

func renderHint(templateImages []string) string {
	for _, im := range templateImages {
		if strings.HasSuffix(im, "@"+bundle.PlaceholderDigest) {
			return "the template's bundle is the all-zero placeholder until the bundle component's first push build nudges it; then run `go tool mage catalog:render`"
		}
	}
	return "run `go tool mage catalog:render`"
}

// digestOf is the digest of a reference by digest (the reference itself when it has none).
func digestOf(ref string) string {
	if d, err := name.NewDigest(ref); err == nil {
		return d.DigestStr()
	}
	return ref
}
