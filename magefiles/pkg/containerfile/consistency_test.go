package containerfile_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	. "github.com/openshift/aws-efs-csi/magefiles/pkg/containerfile"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/efslayout"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/konflux"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/rootfs"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace/workspacetest"
)

func parseImage(t *testing.T, root, name string) File {
	t.Helper()
	f, err := ParseFile(filepath.Join(root, "images", name, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func defaultSpecs(t *testing.T, root string) ([]imagebuild.Spec, versions.Versions) {
	t.Helper()
	v, err := versions.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return imagebuild.DefaultSpecs(v), v
}

// componentRepos maps each Konflux component to the repository its push PipelineRun writes.
func componentRepos(t *testing.T, root string) func(string) string {
	t.Helper()
	runs, err := konflux.Load(filepath.Join(root, konflux.Dir))
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]string{}
	for _, r := range runs {
		if strings.HasSuffix(r.File, "-push.yaml") {
			out := r.Param("output-image")
			repos[r.Metadata.Labels["appstudio.openshift.io/component"]] = out[:strings.LastIndex(out, ":")]
		}
	}
	return func(component string) string { return repos[component] }
}

// TestContainerfileBasesAreMageBases holds each Containerfile's stage graph to the base mage assembles the image
// on: the efs-utils base on an image of its runtime stage (FROM BASE_IMAGE), the driver on our aws-efs-utils-base
// component, the operator on BASE_IMAGE.
func TestContainerfileBasesAreMageBases(t *testing.T) {
	root := workspacetest.Root(t)
	specs, v := defaultSpecs(t, root)
	repos := componentRepos(t, root)
	for _, spec := range specs {
		if problems := CheckBase(spec, parseImage(t, root, spec.Name), v.Get("BASE_IMAGE"), repos); len(problems) > 0 {
			t.Errorf("images/%s/Containerfile and the mage assembly disagree:\n%s", spec.Name, strings.Join(problems, "\n"))
		}
	}
}

// TestCheckBaseCatchesADifferentBase: a Containerfile whose base differs from mage's is reported, whichever of the
// three kinds of base it is.
func TestCheckBaseCatchesADifferentBase(t *testing.T) {
	root := workspacetest.Root(t)
	specs, v := defaultSpecs(t, root)
	repos := componentRepos(t, root)
	for _, row := range []struct {
		spec          imagebuild.Spec
		from, to, bad string
	}{
		{specs[0], "FROM runtime\n", "FROM registry.example.com/other:1\n", "the final stage is FROM registry.example.com/other:1; mage assembles on an image of stage \"runtime\""},
		{specs[0], "FROM ${BASE_IMAGE} AS runtime", "FROM registry.ci.openshift.org/ocp/4.22:base-rhel9 AS runtime", "stage \"runtime\" is FROM registry.ci.openshift.org/ocp/4.22:base-rhel9; its base must be " + v.Get("BASE_IMAGE")},
		{specs[1], "FROM quay.io/redhat-user-workloads/aws-efs-csi-tenant/aws-efs-utils-base@", "FROM registry.ci.openshift.org/ocp/5.0:aws-efs-utils-base@", "the final stage is FROM registry.ci.openshift.org/ocp/5.0:aws-efs-utils-base@sha256:0000000000000000000000000000000000000000000000000000000000000000; mage assembles on image:aws-efs-utils-base, which Konflux pushes to quay.io/redhat-user-workloads/"},
		{specs[2], "FROM ${BASE_IMAGE}\n", "FROM registry.ci.openshift.org/ocp/4.22:base-rhel9\n", "the final stage is FROM registry.ci.openshift.org/ocp/4.22:base-rhel9; mage assembles on " + v.Get("BASE_IMAGE")},
	} {
		data, err := os.ReadFile(filepath.Join(root, "images", row.spec.Name, "Containerfile"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), row.from) {
			t.Fatalf("images/%s/Containerfile has no %q to change", row.spec.Name, row.from)
		}
		f, err := Parse(strings.Replace(string(data), row.from, row.to, 1))
		if err != nil {
			t.Fatal(err)
		}
		problems := CheckBase(row.spec, f, v.Get("BASE_IMAGE"), repos)
		if !strings.Contains(strings.Join(problems, "\n"), row.bad) {
			t.Errorf("%s with %q: problems %q, want one containing %q", row.spec.Name, row.to, problems, row.bad)
		}
	}
}

// TestContainerfilesMatchTheAssemblyConfig holds each Containerfile's final stage to the spec mage assembles:
// labels, entrypoint, user, and the layers' files at the same paths with the same modes.
func TestContainerfilesMatchTheAssemblyConfig(t *testing.T) {
	root := workspacetest.Root(t)
	specs, _ := defaultSpecs(t, root)
	for _, spec := range specs {
		t.Run(spec.Name, func(t *testing.T) {
			f := parseImage(t, root, spec.Name)
			final := f.Final()
			labels := Labels(final)
			for k, want := range imagebuild.Labels(spec, "", "", "", time.Time{}) {
				if slices.Contains(imagebuild.BuildLabels, k) {
					continue // version, release, commit and dates come from the build, not the Containerfile
				}
				if labels[k] != want {
					t.Errorf("LABEL %s=%q, mage sets %q", k, labels[k], want)
				}
			}
			eps := Commands[*instructions.EntrypointCommand](final)
			if len(spec.Config.Entrypoint) > 0 {
				if len(eps) != 1 || eps[0].PrependShell || !slices.Equal(eps[0].CmdLine, spec.Config.Entrypoint) {
					t.Errorf("ENTRYPOINT %+v, mage sets %v", eps, spec.Config.Entrypoint)
				}
			} else if len(eps) != 0 {
				t.Errorf("ENTRYPOINT in the Containerfile, none in the mage spec")
			}
			users := Commands[*instructions.UserCommand](final)
			if spec.Config.User != "" && (len(users) != 1 || users[0].User != spec.Config.User) {
				t.Errorf("USER %v, mage sets %q", users, spec.Config.User)
			}
			for _, ls := range spec.Layers {
				switch ls.Kind {
				case imagebuild.Binary:
					if !copiesTo(final, ls.Dest, "0755") {
						t.Errorf("no COPY --chmod=0755 … %s in the final stage (mage installs %s there)", ls.Dest, ls.Program)
					}
					checkBuilderCompilesOnly(t, f, ls.Program)
				case imagebuild.StaticFiles:
					if !runs(final, "mv /etc/amazon/efs "+ls.Dest) {
						t.Errorf("the final stage does not `mv /etc/amazon/efs %s` (mage moves the static files there)", ls.Dest)
					}
				case imagebuild.EFSUtils:
					if !runs(final, "python3 /src/install-layout.py /src/efs-utils /") {
						t.Errorf("the final stage does not run install-layout.py into / (mage installs efs-utils/layout.json)")
					}
					if !runs(final, "python3 -m compileall -q -f --invalidation-mode unchecked-hash /usr/lib/aws-efs-utils") {
						t.Errorf("the final stage does not byte-compile /usr/lib/aws-efs-utils (unchecked-hash), as mage does")
					}
				case imagebuild.Wheels:
					checkPip(t, f)
				}
			}
		})
	}
}

func copiesTo(s *instructions.Stage, dest, mode string) bool {
	for _, c := range Commands[*instructions.CopyCommand](s) {
		if c.DestPath == dest && c.Chmod == mode {
			return true
		}
	}
	return false
}

func runs(s *instructions.Stage, command string) bool {
	for _, r := range Commands[*instructions.RunCommand](s) {
		if strings.Contains(RunLine(r), command) {
			return true
		}
	}
	return false
}

// checkBuilderCompilesOnly: the builder stage runs `go tool mage build` for its own program only.
func checkBuilderCompilesOnly(t *testing.T, f File, program string) {
	t.Helper()
	for _, s := range f.Stages[:len(f.Stages)-1] {
		if runs(&s, "go tool mage build") && !runs(&s, "PROGRAMS="+program+" go tool mage build") {
			t.Errorf("stage %s runs `go tool mage build` for every program; want PROGRAMS=%s", s.Name, program)
		}
	}
}

// checkPip: the wheels stage builds the pinned distributions offline from the prefetched files, checking every
// hash, without build isolation (RHEL's setuptools and wheel); the final stage installs those wheels without
// dependencies or bytecode under the /usr/local prefix whose site-packages mage fills.
func checkPip(t *testing.T, f File) {
	t.Helper()
	wheels, ok := f.Stage("wheels")
	if !ok {
		t.Fatal("no wheels stage (botocore's sdist is built there)")
	}
	var build string
	for _, r := range Commands[*instructions.RunCommand](wheels) {
		if line := RunLine(r); strings.Contains(line, "pip wheel") {
			build = " " + line + " "
			if !slices.ContainsFunc(instructions.GetMounts(r), func(m *instructions.Mount) bool {
				return m.Source == "requirements.txt.ocp" && m.Target == "/src/requirements.txt.ocp"
			}) {
				t.Errorf("pip wheel does not read the repository's requirements.txt.ocp")
			}
		}
	}
	for _, want := range []string{" --no-index ", " --require-hashes ", " --no-deps ", " --no-build-isolation ", " --find-links ", " -r /src/requirements.txt.ocp "} {
		if !strings.Contains(build, want) {
			t.Errorf("pip wheel lacks %q: %s", strings.TrimSpace(want), build)
		}
	}
	var install string
	for _, r := range Commands[*instructions.RunCommand](f.Final()) {
		if line := RunLine(r); strings.Contains(line, "pip install") {
			install = " " + line + " "
		}
	}
	py := rootfs.Python{Major: 3, Minor: 9}
	prefix := "/" + strings.TrimSuffix(py.SitePackages(), "/lib/python3.9/site-packages")
	for _, want := range []string{" --no-index ", " --no-deps ", " --no-compile ", " --prefix " + prefix + " ", " /wheels/*.whl "} {
		if !strings.Contains(install, want) {
			t.Errorf("the final pip install lacks %q (mage installs the wheels into %s): %s", strings.TrimSpace(want), py.SitePackages(), install)
		}
	}
}

// rhelRoot is what matters of a RHEL 9 root for placing files: merged /usr and /var/run → ../run.
var rhelRoot = []struct{ path, link string }{
	{"usr", ""}, {"usr/bin", ""}, {"usr/sbin", ""}, {"usr/lib", ""}, {"run", ""}, {"var", ""}, {"etc", ""},
	{"sbin", "usr/sbin"}, {"bin", "usr/bin"}, {"var/run", "../run"},
}

// TestInstallLayoutScriptMatchesTheEFSUtilsLayer runs the script the Containerfile runs, on the real efs-utils
// sources, into a RHEL-shaped root, and compares every path, type and mode with the layer mage builds.
func TestInstallLayoutScriptMatchesTheEFSUtilsLayer(t *testing.T) {
	root := workspacetest.Root(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed to run images/aws-efs-utils-base/install-layout.py: %v", err)
	}
	dest := t.TempDir()
	base := rootfs.New()
	for _, e := range rhelRoot {
		p := filepath.Join(dest, e.path)
		if e.link != "" {
			base.Add(e.path, rootfs.Node{Kind: rootfs.Symlink, Link: e.link})
			if err := os.Symlink(e.link, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		base.Add(e.path, rootfs.Node{Kind: rootfs.Dir, Mode: 0o755})
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), python, filepath.Join(root, "images/aws-efs-utils-base/install-layout.py"), filepath.Join(root, "efs-utils"), dest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install-layout.py: %v\n%s", err, out)
	}
	var script []string
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dest {
			return err
		}
		rel, _ := filepath.Rel(dest, p)
		if _, pre := base.Lookup(rel); pre {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		kind := "file"
		if info.IsDir() {
			kind = "dir"
		}
		script = append(script, fmt.Sprintf("%s %s %04o", kind, filepath.ToSlash(rel), info.Mode().Perm()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := efslayout.Read(filepath.Join(root, "efs-utils", "layout.json"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := l.Entries(filepath.Join(root, "efs-utils"))
	if err != nil {
		t.Fatal(err)
	}
	placed, err := layer.Place(entries, base)
	if err != nil {
		t.Fatal(err)
	}
	var mage []string
	for _, e := range placed {
		mage = append(mage, fmt.Sprintf("%s %s %04o", e.Kind, e.Path, e.Mode))
	}
	sort.Strings(script)
	sort.Strings(mage)
	if !slices.Equal(script, mage) {
		t.Fatalf("install-layout.py and the mage efs-utils layer differ\nscript:\n%s\nmage:\n%s", strings.Join(script, "\n"), strings.Join(mage, "\n"))
	}
	if !slices.Contains(mage, "file usr/sbin/mount.efs 0755") {
		t.Errorf("mount.efs is not installed at /sbin/mount.efs (usr/sbin on RHEL 9) with mode 0755:\n%s", strings.Join(mage, "\n"))
	}
}
