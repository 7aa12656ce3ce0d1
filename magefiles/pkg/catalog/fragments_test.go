package catalog

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/bundle"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

// bundleRepository is where Konflux pushes the bundle, the repository every template names.
const bundleRepository = "quay.io/redhat-user-workloads/aws-efs-csi-tenant/aws-efs-csi-driver-operator-bundle"

// fragmentRoot makes a repository root holding copies of every committed template and a mirror set, with each
// template's bundle reference replaced by replace (when not empty).
func fragmentRoot(t *testing.T, mirrors string, replace func(string) string) string {
	t.Helper()
	root := workspacetest.Root(t)
	vs, err := Versions(root)
	if err != nil {
		t.Fatal(err)
	}
	fake := t.TempDir()
	for _, v := range vs {
		data, err := os.ReadFile(filepath.Join(root, TemplatePath(v)))
		if err != nil {
			t.Fatal(err)
		}
		if replace != nil {
			data = []byte(replace(string(data)))
		}
		if err := os.MkdirAll(filepath.Join(fake, FragmentDir(v)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, TemplatePath(v)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(fake, ".tekton"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, bundle.MirrorSetFile), []byte(mirrors), 0o644); err != nil {
		t.Fatal(err)
	}
	return fake
}

// TestFragmentsRenderFromThePushedBundle runs the code path of `go tool mage catalog:render` on every committed
// template: before the bundle's first push (the placeholder) nothing renders and every version is reported as not
// rendered; once the templates name a bundle image that `go tool mage bundle`'s code built and pushed (to an
// in-process registry, under the name the mirror set maps to the released one), every version renders from the
// registry into its catalog, which `opm validate` accepts, at the version's metadata format, naming the released
// bundle by the pushed digest; a later nudge of a template makes its catalog stale.
func TestFragmentsRenderFromThePushedBundle(t *testing.T) {
	reg := startRegistry(t)
	_, ref := pushBundle(t, reg, "v5.0.1", pinImages(t, reg))
	d, err := name.NewDigest(ref)
	if err != nil {
		t.Fatal(err)
	}
	released := "registry.redhat.io/openshift4/ose-aws-efs-csi-driver-operator-bundle"
	mirrors := "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nspec:\n  imageDigestMirrors:\n" +
		"    - source: " + released + "\n      mirrors: [" + d.Context().Name() + "]\n"

	unpushed := fragmentRoot(t, mirrors, nil)
	err = RenderFragments(t.Context(), unpushed, &Registry{Insecure: true}, io.Discard)
	if !errors.Is(err, ErrBundleNotPushed) {
		t.Fatalf("rendering the placeholder templates: %v, want %v", err, ErrBundleNotPushed)
	}
	status, err := FragmentStatus(t.Context(), unpushed)
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := Versions(unpushed)
	if len(status) != len(vs) || !strings.Contains(strings.Join(status, "\n"), "catalog not rendered") {
		t.Fatalf("status before the first push: %q, want one \"catalog not rendered\" per version %v", status, vs)
	}

	placeholder := bundleRepository + "@" + bundle.PlaceholderDigest
	root := fragmentRoot(t, mirrors, func(s string) string {
		if !strings.Contains(s, placeholder) {
			t.Fatalf("a template does not name %s", placeholder)
		}
		return strings.ReplaceAll(s, placeholder, ref)
	})
	if err := RenderFragments(t.Context(), root, &Registry{Insecure: true}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		dir := filepath.Join(root, RenderedDir(v))
		runOPM(t, "validate", dir)
		cfg, err := declcfg.LoadFS(t.Context(), os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Bundles) != 1 || cfg.Bundles[0].Image != released+"@"+d.DigestStr() {
			t.Errorf("OpenShift %s: bundles %+v: want one, %s@%s", v, cfg.Bundles, released, d.DigestStr())
		}
		checkMetadataFormat(t, v, cfg)
		if _, err := os.Stat(filepath.Join(dir, ourPackage, "catalog.yaml")); err != nil {
			t.Errorf("OpenShift %s: %v: want opm's layout <package>/catalog.yaml", v, err)
		}
	}
	if status, err := FragmentStatus(t.Context(), root); err != nil || len(status) > 0 {
		t.Fatalf("status after rendering: %q, %v; want nothing", status, err)
	}

	// A nudge of one template (a new bundle digest) leaves its catalog stale until it is rendered again.
	nudged := filepath.Join(root, TemplatePath(vs[0]))
	data, _ := os.ReadFile(nudged)
	other := "sha256:" + strings.Repeat("ab", 32)
	if err := os.WriteFile(nudged, []byte(strings.ReplaceAll(string(data), d.DigestStr(), other)), 0o644); err != nil {
		t.Fatal(err)
	}
	status, err = FragmentStatus(t.Context(), root)
	if err != nil || len(status) != 1 || !strings.Contains(status[0], RenderedDir(vs[0])+": stale") {
		t.Fatalf("status after a nudge of %s: %q, %v; want it stale", vs[0], status, err)
	}
}

// TestCommittedFragments: every committed catalog is `opm validate`-clean, at its version's metadata format and
// the render of its template; a version without one is allowed only while its template names the placeholder
// (before the bundle's first push), and is then reported by FragmentStatus (so by `go tool mage konflux`).
func TestCommittedFragments(t *testing.T) {
	root := workspacetest.Root(t)
	vs, err := Versions(root)
	if err != nil {
		t.Fatal(err)
	}
	status, err := FragmentStatus(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(status, "\n")
	for _, v := range vs {
		dir := filepath.Join(root, RenderedDir(v))
		if _, err := os.Stat(dir); err != nil {
			images, err := TemplateBundleImages(filepath.Join(root, TemplatePath(v)))
			if err != nil {
				t.Fatal(err)
			}
			if len(images) == 0 || !strings.HasSuffix(images[0], "@"+bundle.PlaceholderDigest) {
				t.Errorf("%s names %v but %s is not committed: run `go tool mage catalog:render`", TemplatePath(v), images, RenderedDir(v))
			}
			if !strings.Contains(all, FragmentDir(v)+": catalog not rendered") {
				t.Errorf("FragmentStatus does not report %s as not rendered: %q", v, status)
			}
			continue
		}
		runOPM(t, "validate", dir)
		cfg, err := declcfg.LoadFS(t.Context(), os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		checkMetadataFormat(t, v, cfg)
	}
}

// TestFragmentVersionsAreTheBundlesRange: one fragment per OpenShift minor the bundle installs on
// (com.redhat.openshift.versions v<OPENSHIFT_MIN_VERSION>-v<OPENSHIFT_VERSION>), no gap, and the opm base of the
// newest one is OPERATOR_REGISTRY_IMAGE of the versions file.
func TestFragmentVersionsAreTheBundlesRange(t *testing.T) {
	root := workspacetest.Root(t)
	vs, err := Versions(root)
	if err != nil {
		t.Fatal(err)
	}
	v, err := versions.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if vs[0] != v.Get("OPENSHIFT_MIN_VERSION") || vs[len(vs)-1] != v.Get("OPENSHIFT_VERSION") {
		t.Errorf("fragments %v: want %s to %s (%s)", vs, v.Get("OPENSHIFT_MIN_VERSION"), v.Get("OPENSHIFT_VERSION"), versions.File)
	}
	for i := 1; i < len(vs); i++ {
		a, _ := parseVersion(vs[i-1])
		b, _ := parseVersion(vs[i])
		if !(a[0] == b[0] && b[1] == a[1]+1) && !(b[0] == a[0]+1 && b[1] == 0) {
			t.Errorf("fragments %v: a gap between %s and %s", vs, vs[i-1], vs[i])
		}
	}
	if got, _ := OPMBase(v.Get("OPERATOR_REGISTRY_IMAGE"), v.Get("OPENSHIFT_VERSION")); got != v.Get("OPERATOR_REGISTRY_IMAGE") {
		t.Errorf("OPMBase(%s) = %s, %s has OPERATOR_REGISTRY_IMAGE=%s", v.Get("OPENSHIFT_VERSION"), got, versions.File, v.Get("OPERATOR_REGISTRY_IMAGE"))
	}
}

func TestComponentNames(t *testing.T) {
	for ocp, want := range map[string]string{"4.14": "aws-efs-csi-driver-operator-catalog-v4-14", "5.0": "aws-efs-csi-driver-operator-catalog-v5-0"} {
		if got := ComponentFor(ocp); got != want || VersionOfComponent(got) != ocp {
			t.Errorf("ComponentFor(%s) = %s (back: %q), want %s", ocp, got, VersionOfComponent(got), want)
		}
	}
	for _, c := range []string{"aws-efs-csi-driver-operator-catalog", "aws-efs-csi-driver-operator-bundle", "aws-efs-csi-driver-operator-catalog-vX-1"} {
		if v := VersionOfComponent(c); v != "" {
			t.Errorf("VersionOfComponent(%s) = %q, want none", c, v)
		}
	}
	for ocp, want := range map[string]string{"4.14": "registry.redhat.io/openshift4/ose-operator-registry:v4.14", "4.15": "registry.redhat.io/openshift4/ose-operator-registry-rhel9:v4.15", "5.0": "registry.redhat.io/openshift4/ose-operator-registry-rhel9:v5.0"} {
		if got, err := OPMBase("registry.redhat.io/openshift4/ose-operator-registry-rhel9:v5.0", ocp); err != nil || got != want {
			t.Errorf("OPMBase(%s) = %s, %v; want %s", ocp, got, err, want)
		}
	}
	if _, err := OPMBase("registry.redhat.io/openshift4/ose-operator-registry-rhel9:v5.0", "v4.18"); err == nil {
		t.Error("OPMBase(v4.18) accepted")
	}
}
