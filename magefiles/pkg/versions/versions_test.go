package versions_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/containerfile"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/konflux"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

func load(t *testing.T) (string, versions.Versions) {
	t.Helper()
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := versions.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, v
}

// TestValuesAgreeWithEachOther: the builder is the Go version's builder of the OpenShift stream, the bases and
// the catalog base are that stream's, and the minimum Kubernetes is the minimum OpenShift's.
func TestValuesAgreeWithEachOther(t *testing.T) {
	_, v := load(t)
	ocp := v.Get("OPENSHIFT_VERSION")
	for key, want := range map[string]string{
		"BUILDER_IMAGE":           "registry.ci.openshift.org/ocp/builder:rhel-9-golang-" + v.Get("GO_VERSION") + "-openshift-" + ocp,
		"BASE_IMAGE":              "registry.ci.openshift.org/ocp/" + ocp + ":base-rhel9",
		"OPERATOR_REGISTRY_IMAGE": "registry.redhat.io/openshift4/ose-operator-registry-rhel9:v" + ocp,
		"CPE":                     "cpe:/a:redhat:openshift:" + ocp + "::el9",
	} {
		if got := v.Get(key); got != want {
			t.Errorf("%s=%s, want %s (from GO_VERSION and OPENSHIFT_VERSION)", key, got, want)
		}
	}
	for ocpKey, kubeKey := range map[string]string{"OPENSHIFT_VERSION": "KUBE_VERSION", "OPENSHIFT_MIN_VERSION": "KUBE_MIN_VERSION"} {
		kube, err := kubernetesOf(v.Get(ocpKey))
		if err != nil {
			t.Fatalf("%s: %v", ocpKey, err)
		}
		if got := v.Get(kubeKey); got != kube && got != kube+".0" {
			t.Errorf("%s=%s, but OpenShift %s ships Kubernetes %s", kubeKey, got, v.Get(ocpKey), kube)
		}
	}
}

// kubernetesOf is the Kubernetes minor of an OpenShift release: 4.N ships 1.(N+13), and 5.M, whose first release
// follows 4.22, continues the one-minor-per-release cadence: 1.(36+M).
func kubernetesOf(ocp string) (string, error) {
	major, minor, ok := strings.Cut(ocp, ".")
	n, err := strconv.Atoi(minor)
	if !ok || err != nil || (major != "4" && major != "5") {
		return "", fmt.Errorf("%q: want 4.N or 5.M", ocp)
	}
	if major == "4" {
		return fmt.Sprintf("1.%d", n+13), nil
	}
	return fmt.Sprintf("1.%d", n+36), nil
}

func TestKubernetesOf(t *testing.T) {
	for ocp, want := range map[string]string{"4.14": "1.27", "4.22": "1.35", "5.0": "1.36"} {
		if got, err := kubernetesOf(ocp); err != nil || got != want {
			t.Errorf("kubernetesOf(%s) = %s, %v; want %s", ocp, got, err, want)
		}
	}
}

// TestGoModulesUseTheBuildersGo: every go.mod of the workspace (and go.work) declares GO_VERSION.
func TestGoModulesUseTheBuildersGo(t *testing.T) {
	root, v := load(t)
	mods, err := workspace.Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"go.work"}
	for _, m := range mods {
		names = append(names, filepath.Join(m.Dir, "go.mod"))
	}
	if len(names) < 5 { // go.work, driver, magefiles, operator, testharness
		t.Fatalf("go.work uses %d modules; want at least the four of the repository", len(mods))
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		var goLine string
		if name == "go.work" {
			wf, err := modfile.ParseWork(name, data, nil)
			if err != nil {
				t.Fatal(err)
			}
			goLine = wf.Go.Version
		} else {
			mf, err := modfile.ParseLax(name, data, nil)
			if err != nil {
				t.Fatal(err)
			}
			goLine = mf.Go.Version
		}
		if goLine != v.Get("GO_VERSION") && !strings.HasPrefix(goLine, v.Get("GO_VERSION")+".") {
			t.Errorf("%s: go %s, but the builder image has Go %s (%s)", name, goLine, v.Get("GO_VERSION"), versions.File)
		}
	}
}

// TestContainerfileArgDefaultsAreTheFilesValues: an ARG named like a key of the file defaults to its value, and
// every Containerfile builds FROM such an ARG (no literal image references), except a FROM of one of our own
// Konflux components by digest, the form its nudge rewrites (magefiles/pkg/konflux): that reference lives only
// in the Containerfile, so a nudge pull request that edits only it still passes.
func TestContainerfileArgDefaultsAreTheFilesValues(t *testing.T) {
	root, v := load(t)
	runs, err := konflux.Load(filepath.Join(root, konflux.Dir))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "images", "*", "Containerfile"))
	files = append(files, filepath.Join(root, "operator", "manifests", "bundle.Containerfile"))
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		f, err := containerfile.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range argDefaultProblems(v, runs, f) {
			t.Errorf("%s: %s", rel, p)
		}
	}
}

// TestANudgeKeepsTheArgDefaultsRule: the driver Containerfile as the base component's nudge leaves it (a new
// digest, nothing else) still satisfies the rule.
func TestANudgeKeepsTheArgDefaultsRule(t *testing.T) {
	root, v := load(t)
	runs, err := konflux.Load(filepath.Join(root, konflux.Dir))
	if err != nil {
		t.Fatal(err)
	}
	_, repo := konflux.PushRepo(runs, konflux.BaseComponent)
	data, err := os.ReadFile(filepath.Join(root, konflux.DriverContainerfile))
	if err != nil {
		t.Fatal(err)
	}
	nudged := konflux.Nudge(string(data), repo, "sha256:"+strings.Repeat("ab", 32))
	if nudged == string(data) {
		t.Fatalf("the nudge of %s changed nothing in %s", repo, konflux.DriverContainerfile)
	}
	f, err := containerfile.Parse(nudged)
	if err != nil {
		t.Fatal(err)
	}
	if p := argDefaultProblems(v, runs, f); len(p) > 0 {
		t.Errorf("after a nudge: %v", p)
	}
	bad, _ := containerfile.Parse(strings.Replace(string(data), repo+"@", "quay.io/elsewhere/base@", 1))
	if p := argDefaultProblems(v, runs, bad); len(p) == 0 {
		t.Errorf("a literal FROM of a repository that is not our component passed")
	}
}

func argDefaultProblems(v versions.Versions, runs []konflux.Run, f containerfile.File) []string {
	var problems []string
	for k, def := range f.Args {
		if want, ok := v.Values[k]; ok && def != want {
			problems = append(problems, fmt.Sprintf("ARG %s=%s, %s has %s", k, def, versions.File, want))
		}
	}
	stages := map[string]bool{}
	for _, s := range f.Stages {
		if !stages[s.BaseName] && s.BaseName != "scratch" && !isFileValue(v, s.BaseName) && !isComponentByDigest(runs, s.BaseName) {
			problems = append(problems, fmt.Sprintf("FROM %s is neither an earlier stage, a value of %s, nor one of our components by digest", s.BaseName, versions.File))
		}
		stages[s.Name] = true
	}
	return problems
}

func isComponentByDigest(runs []konflux.Run, ref string) bool {
	for _, c := range konflux.ImageComponents {
		if _, repo := konflux.PushRepo(runs, c); repo != "" && konflux.NudgeTarget(repo).FindString(ref) == ref {
			return true
		}
	}
	return false
}

func isFileValue(v versions.Versions, s string) bool {
	for _, val := range v.Values {
		if val == s {
			return true
		}
	}
	return false
}

// TestBundleTargetsTheFilesOpenShift: the CSV's olm.maxOpenShiftVersion and minKubeVersion, and the bundle's
// com.redhat.openshift.versions (annotations.yaml and the bundle Containerfile's label) come from the file.
func TestBundleTargetsTheFilesOpenShift(t *testing.T) {
	root, v := load(t)
	data, err := os.ReadFile(filepath.Join(root, "operator/manifests/aws-efs-csi-driver-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var csv struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			MinKubeVersion string `json:"minKubeVersion"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &csv); err != nil {
		t.Fatal(err)
	}
	var props []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}
	if err := json.Unmarshal([]byte(csv.Metadata.Annotations["olm.properties"]), &props); err != nil {
		t.Fatalf("olm.properties: %v", err)
	}
	max := ""
	for _, p := range props {
		if p.Type == "olm.maxOpenShiftVersion" {
			max = p.Value
		}
	}
	// OpenShift's own CSV sets it one minor above its stream (openshift/csi-operator@80937768 release-5.0:
	// 5.1 for 5.0), so that clusters can still upgrade to the next minor.
	if want := nextMinor(t, v.Get("OPENSHIFT_VERSION")); max != want {
		t.Errorf("CSV olm.maxOpenShiftVersion %q, want %s, one minor above OPENSHIFT_VERSION %s", max, want, v.Get("OPENSHIFT_VERSION"))
	}
	if csv.Spec.MinKubeVersion != v.Get("KUBE_MIN_VERSION") {
		t.Errorf("CSV minKubeVersion %s, want KUBE_MIN_VERSION %s", csv.Spec.MinKubeVersion, v.Get("KUBE_MIN_VERSION"))
	}
	data, err = os.ReadFile(filepath.Join(root, "operator/manifests/metadata/annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &ann); err != nil {
		t.Fatal(err)
	}
	if got := ann.Annotations["com.redhat.openshift.versions"]; got != v.OpenShiftRange() {
		t.Errorf("annotations.yaml com.redhat.openshift.versions %s, want %s", got, v.OpenShiftRange())
	}
	bundle, err := containerfile.ParseFile(filepath.Join(root, "operator/manifests/bundle.Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if got := containerfile.Labels(bundle.Final())["com.redhat.openshift.versions"]; got != v.OpenShiftRange() {
		t.Errorf("bundle.Containerfile com.redhat.openshift.versions %s, want %s", got, v.OpenShiftRange())
	}
}

func nextMinor(t *testing.T, v string) string {
	t.Helper()
	major, minor, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(minor)
	if !ok || err != nil {
		t.Fatalf("OPENSHIFT_VERSION %q: want MAJOR.MINOR", v)
	}
	return major + "." + strconv.Itoa(n+1)
}

// TestRPMLockResolvesAgainstTheBase: rpm-lockfile-prototype resolves the RPMs against BASE_IMAGE, the base of the
// stage that installs them.
func TestRPMLockResolvesAgainstTheBase(t *testing.T) {
	root, v := load(t)
	data, err := os.ReadFile(filepath.Join(root, "ci/prefetch/aws-efs-utils-base/rpms.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Context struct {
			Image string `json:"image"`
		} `json:"context"`
	}
	if err := yaml.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Context.Image != v.Get("BASE_IMAGE") {
		t.Errorf("rpms.in.yaml context.image %s, want BASE_IMAGE %s", in.Context.Image, v.Get("BASE_IMAGE"))
	}
}

// TestPipelineRunsReadTheFile: every Konflux build passes the file as its build-args-file.
func TestPipelineRunsReadTheFile(t *testing.T) {
	root, _ := load(t)
	runs, err := konflux.Load(filepath.Join(root, konflux.Dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if got := r.Param("build-args-file"); got != versions.File {
			t.Errorf("%s: build-args-file %q, want %s", filepath.Base(r.File), got, versions.File)
		}
	}
}

// versionLike matches the literals that belong in the versions file: OpenShift image references and tags,
// builder tags, CPEs and the Kubernetes of an OpenShift release.
var versionLike = regexp.MustCompile(`registry\.(ci\.openshift\.org|redhat\.io)/|ose-[a-z0-9-]+:v\d|openshift-\d+\.\d+|golang-\d+\.\d+|cpe:/a:redhat|^v?1\.\d\d(\.\d+)?$|^v?[45]\.\d+$`)

// TestMagefilesHaveNoVersionLiterals: no Go file of magefiles/ (tests aside) carries a version-like string
// literal; such a value would silently stay behind when images/versions.conf moves to the next OpenShift.
func TestMagefilesHaveNoVersionLiterals(t *testing.T) {
	root, _ := load(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "magefiles"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && versionLike.MatchString(s) {
				t.Errorf("%s: version-like literal %s: take it from %s", fset.Position(lit.Pos()), lit.Value, versions.File)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestVersionLikeMatchesWhatItShould(t *testing.T) {
	for _, s := range []string{"registry.redhat.io/openshift4/ose-operator-registry-rhel9:v4.22", "1.35", "4.22", "v5.0",
		"rhel-9-golang-1.26-openshift-5.0", "cpe:/a:redhat:openshift:4.22::el9"} {
		if !versionLike.MatchString(s) {
			t.Errorf("%q is not matched", s)
		}
	}
	for _, s := range []string{"quay.io/openshift/origin-", "botocore==1.34.140", "0.0.0", "linux/amd64"} {
		if versionLike.MatchString(s) {
			t.Errorf("%q is matched", s)
		}
	}
}
