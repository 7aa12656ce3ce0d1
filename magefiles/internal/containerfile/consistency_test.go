package containerfile

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

	"github.com/openshift/aws-efs-csi/magefiles/internal/efslayout"
	"github.com/openshift/aws-efs-csi/magefiles/internal/imagebuild"
	"github.com/openshift/aws-efs-csi/magefiles/internal/layer"
	"github.com/openshift/aws-efs-csi/magefiles/internal/rootfs"
	"github.com/openshift/aws-efs-csi/magefiles/internal/workspace"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func parseImage(t *testing.T, root, name string) File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "images", name, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(string(data))
	if err != nil {
		t.Fatalf("images/%s/Containerfile: %v", name, err)
	}
	return f
}

// TestContainerfilesMatchTheAssemblyConfig holds each Containerfile's final stage to the spec mage assembles:
// labels, entrypoint, user, and the binaries at the same path with the same mode.
func TestContainerfilesMatchTheAssemblyConfig(t *testing.T) {
	root := repoRoot(t)
	for _, spec := range imagebuild.DefaultSpecs() {
		t.Run(spec.Name, func(t *testing.T) {
			final := parseImage(t, root, spec.Name).Final()
			labels, err := final.Labels()
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]string{"io.k8s.display-name": spec.Config.DisplayName, "io.k8s.description": spec.Config.Description,
				"io.openshift.tags": spec.Config.Tags, "org.opencontainers.image.source": imagebuild.SourceURL} {
				if labels[k] != want {
					t.Errorf("LABEL %s = %q, mage sets %q", k, labels[k], want)
				}
			}
			if eps := final.Find("ENTRYPOINT"); len(spec.Config.Entrypoint) > 0 {
				if len(eps) != 1 {
					t.Fatalf("%d ENTRYPOINT instructions, want 1", len(eps))
				}
				got, err := eps[0].JSONArgs()
				if err != nil || !slices.Equal(got, spec.Config.Entrypoint) {
					t.Errorf("ENTRYPOINT %v (%v), mage sets %v", got, err, spec.Config.Entrypoint)
				}
			} else if len(eps) != 0 {
				t.Errorf("ENTRYPOINT in the Containerfile, none in the mage spec")
			}
			users := final.Find("USER")
			if spec.Config.User != "" && (len(users) != 1 || users[0].Args != spec.Config.User) {
				t.Errorf("USER %v, mage sets %q", users, spec.Config.User)
			}
			for _, ls := range spec.Layers {
				switch ls.Kind {
				case imagebuild.Binary:
					if !copiesTo(final, ls.Dest, "0755") {
						t.Errorf("no COPY --chmod=0755 … %s in the final stage (mage installs %s there)", ls.Dest, ls.Program)
					}
				case imagebuild.StaticFiles:
					if !runs(final, "mv /etc/amazon/efs "+ls.Dest) {
						t.Errorf("the final stage does not `mv /etc/amazon/efs %s` (mage moves the static files there)", ls.Dest)
					}
				case imagebuild.EFSUtils:
					if !runs(final, "python3 /src/install-layout.py /src/efs-utils /") {
						t.Errorf("the final stage does not run install-layout.py into / (mage installs efs-utils/layout.json)")
					}
				case imagebuild.Wheels:
					checkPip(t, final)
				}
			}
		})
	}
}

func copiesTo(s Stage, dest, mode string) bool {
	for _, c := range s.Find("COPY") {
		fields := strings.Fields(c.Args)
		if len(fields) >= 2 && fields[len(fields)-1] == dest && c.Flag("chmod") == mode {
			return true
		}
	}
	return false
}

func runs(s Stage, command string) bool {
	for _, r := range s.Find("RUN") {
		if strings.Contains(strings.Join(strings.Fields(r.Args), " "), command) {
			return true
		}
	}
	return false
}

// checkPip asserts the pip install matches the mage wheel installation: only hash-pinned wheels from the
// wheelhouse, no dependencies, no bytecode, and the /usr/local prefix whose site-packages mage fills.
func checkPip(t *testing.T, s Stage) {
	t.Helper()
	var pip *Instruction
	for _, r := range s.Find("RUN") {
		if strings.Contains(r.Args, "pip install") {
			pip = &r
		}
	}
	if pip == nil {
		t.Fatal("no pip install in the final stage")
	}
	args := " " + strings.Join(strings.Fields(pip.Args), " ") + " "
	for _, want := range []string{" --no-index ", " --require-hashes ", " --only-binary :all: ", " --no-deps ", " --no-compile ", " --find-links ", " -r /src/requirements.txt.ocp "} {
		if !strings.Contains(args, want) {
			t.Errorf("pip install lacks %q: %s", strings.TrimSpace(want), pip.Args)
		}
	}
	py := rootfs.Python{Major: 3, Minor: 9}
	prefix := "/" + strings.TrimSuffix(py.SitePackages(), "/lib/python3.9/site-packages")
	if !strings.Contains(args, " --prefix "+prefix+" ") {
		t.Errorf("pip install does not use --prefix %s, where mage installs the wheels (%s): %s", prefix, py.SitePackages(), pip.Args)
	}
	if !slices.Contains(pip.Flags, "--mount=type=bind,source=requirements.txt.ocp,target=/src/requirements.txt.ocp") {
		t.Errorf("pip install does not read the repository's requirements.txt.ocp: %v", pip.Flags)
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
	root := repoRoot(t)
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
