package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

// k8sVersion is KUBE_VERSION of the repository's images/versions.conf, the version bundle runs validate against.
func k8sVersion(t *testing.T) string {
	t.Helper()
	v, err := versions.Load(workspacetest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	return v.Get("KUBE_VERSION")
}

// copySources copies the shipped manifests and CRDs into a temporary tree and applies edit to the CSV template.
func copySources(t *testing.T, edit func(csv string) string) Sources {
	t.Helper()
	real := SourcesIn(workspacetest.Root(t))
	dst := Sources{Manifests: filepath.Join(t.TempDir(), "manifests"), CRDs: filepath.Join(t.TempDir(), "crds"), MirrorSet: real.MirrorSet}
	for _, pair := range [][2]string{{real.Manifests, dst.Manifests}, {real.CRDs, dst.CRDs}} {
		err := filepath.WalkDir(pair[0], func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(pair[0], p)
			to := filepath.Join(pair[1], rel)
			if d.IsDir() {
				return os.MkdirAll(to, 0o755)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if rel == CSVFile && edit != nil {
				data = []byte(edit(string(data)))
			}
			return os.WriteFile(to, data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// pinnedValues resolves every shipped image to a digest reference.
func pinnedValues(t *testing.T, src Sources) Values {
	t.Helper()
	images, err := ReadImages(filepath.Join(src.Manifests, ImagesFile))
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for _, im := range images {
		pins[im.Placeholder] = "registry.example.com/test/" + strings.ToLower(im.RelatedImage) + "@" + digestA
	}
	res, err := ResolveSources(src, pins, "")
	if err != nil {
		t.Fatal(err)
	}
	return Values{Version: "5.0.1", Images: res}
}

func renderAndValidate(t *testing.T, src Sources, v Values, opts ValidateOptions) Report {
	t.Helper()
	dir := t.TempDir()
	if err := Render(src, dir, v); err != nil {
		t.Fatal(err)
	}
	r, err := Validate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestShippedManifestsValidate(t *testing.T) {
	src := copySources(t, nil)
	r := renderAndValidate(t, src, pinnedValues(t, src), ValidateOptions{RequireDigests: true, K8sVersion: k8sVersion(t)})
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	for _, w := range r.Warnings {
		t.Logf("warning: %s", w)
	}
	// The CSV's own references pass while any digest is a placeholder, unless digests are required.
	dev, err := ResolveSources(src, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(Unrecorded(dev)) == 0 {
		t.Skip("every digest of the CSV is recorded: no placeholder left to refuse")
	}
	v := Values{Version: "5.0.1", Images: dev}
	if err := renderAndValidate(t, src, v, ValidateOptions{K8sVersion: k8sVersion(t)}).Err(); err != nil {
		t.Fatalf("development bundle: %v", err)
	}
	err = renderAndValidate(t, src, v, ValidateOptions{RequireDigests: true, K8sVersion: k8sVersion(t)}).Err()
	if err == nil || !strings.Contains(err.Error(), "has the placeholder digest") {
		t.Fatalf("bundle with placeholder digests and digests required: error %v, want one about the placeholder", err)
	}
}

func TestBrokenCSVFailsWithTheValidatorsMessage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		wantErr  string
	}{
		{"unknown install mode", "- type: AllNamespaces\n      supported: true", "- type: AllNamespaces\n      supported: true\n    - type: Everywhere\n      supported: true",
			`unknown install mode type "Everywhere"`},
		{"AllNamespaces unsupported", "- type: AllNamespaces\n      supported: true", "- type: AllNamespaces\n      supported: false",
			"none of InstallModeTypes are supported"},
		{"missing relatedImage", "    - name: tools\n      image: registry.redhat.io/openshift4/ose-tools-rhel9@" + PlaceholderDigest + "\n", "    - name: tools\n      image: registry.example.com/other/tools@" + digestB + "\n",
			"spec.relatedImages: missing registry.redhat.io/openshift4/ose-tools-rhel9@" + PlaceholderDigest + ", used by deployment aws-efs-csi-driver-operator container aws-efs-csi-driver-operator env TOOLS_IMAGE"},
		{"wildcard verb", "verbs: [bind]", `verbs: ["*"]`, `verbs contains "*"`},
		{"wildcard resource", "resources: [pods, endpoints]", `resources: ["*"]`, `resources contains "*"`},
		{"no token-auth-aws", "    features.operators.openshift.io/token-auth-aws: \"true\"\n", "", "missing features.operators.openshift.io/token-auth-aws"},
		{"no arm64", "    operatorframework.io/arch.arm64: supported\n", "", "operatorframework.io/arch.arm64"},
		{"no tls-profiles", "    features.operators.openshift.io/tls-profiles: \"true\"\n", "", "missing features.operators.openshift.io/tls-profiles"},
		{"feature not a boolean", `features.operators.openshift.io/disconnected: "true"`, `features.operators.openshift.io/disconnected: "yes"`,
			`features.operators.openshift.io/disconnected "yes": want "true" or "false"`},
		{"csi false", `features.operators.openshift.io/csi: "true"`, `features.operators.openshift.io/csi: "false"`,
			`features.operators.openshift.io/csi "false": want "true" for this operator`},
		{"unknown feature", `features.operators.openshift.io/csi: "true"`, "features.operators.openshift.io/csi: \"true\"\n    features.operators.openshift.io/sts: \"true\"",
			"unknown feature annotation features.operators.openshift.io/sts"},
		{"deprecated infrastructure-features", "    features.operators.openshift.io/csi: \"true\"\n", "    features.operators.openshift.io/csi: \"true\"\n    operators.openshift.io/infrastructure-features: '[\"csi\"]'\n",
			"operators.openshift.io/infrastructure-features is deprecated"},
		{"no maxOpenShiftVersion", `olm.properties: '[{"type": "olm.maxOpenShiftVersion", "value": "5.1"}]'`, `olm.properties: '[]'`, "no olm.maxOpenShiftVersion"},
		{"privilege escalation", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "allowPrivilegeEscalation must be false"},
		{"root", "runAsNonRoot: true", "runAsNonRoot: false", "runAsNonRoot must be true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := copySources(t, func(csv string) string {
				if !strings.Contains(csv, tc.old) {
					t.Fatalf("the CSV template no longer contains %q", tc.old)
				}
				return strings.Replace(csv, tc.old, tc.new, 1)
			})
			dir := t.TempDir()
			if err := Render(src, dir, pinnedValues(t, src)); err != nil {
				t.Fatal(err)
			}
			r, err := Validate(dir, ValidateOptions{K8sVersion: k8sVersion(t)})
			if err == nil {
				err = r.Err()
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			t.Logf("%v", err)
		})
	}
}

func TestRenderRefusesACSVThatLostAnArtSearchString(t *testing.T) {
	src := copySources(t, func(csv string) string { return strings.Replace(csv, "  version: 5.0.1", "  version: 5.0.2", 1) })
	err := Render(src, t.TempDir(), pinnedValues(t, src))
	if err == nil || !strings.Contains(err.Error(), `art.yaml search "  version: 5.0.1" is not in the file`) {
		t.Fatalf("error %v, want one naming art.yaml's search string", err)
	}
}
