package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/openshift/aws-efs-csi/operator/test/toolcache"
)

// Versions of the Kubernetes binaries, one version for every test that runs Kubernetes. KubernetesVersion
// matches the operator's k8s.io/client-go (v0.36.2); EtcdVersion is the etcd server that k8s.io/kubernetes
// requires at that version, so both are built in one module and one `go build`.
const (
	KubernetesVersion = "v1.36.2"
	EtcdVersion       = "v3.6.8"
)

// ToolsDirEnv overrides where built tools are cached (ToolsDir).
const ToolsDirEnv = toolcache.DirEnv

// commands are the packages built into a Kubernetes set, keyed by the binary name `go build` gives them.
var commands = []struct{ name, pkg string }{
	{"etcd", "go.etcd.io/etcd/server/v3"},
	{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"},
	{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager"},
	{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"},
	{"kubelet", "k8s.io/kubernetes/cmd/kubelet"},
	{"kubectl", "k8s.io/kubernetes/cmd/kubectl"},
}

// nodeCommands are built into a set of their own beside the first (which predates them, so that its cached
// copies stay valid); the second build reuses the Go build cache the first filled, so it is mostly a link.
var nodeCommands = []struct{ name, pkg string }{
	{"kube-proxy", "k8s.io/kubernetes/cmd/kube-proxy"},
}

// Binaries are the paths of one built Kubernetes set.
type Binaries struct {
	Etcd                  string
	KubeAPIServer         string
	KubeControllerManager string
	KubeScheduler         string
	Kubelet               string
	Kubectl               string
	KubeProxy             string
}

func binariesIn(dir string) Binaries {
	return Binaries{
		Etcd:                  filepath.Join(dir, "etcd"),
		KubeAPIServer:         filepath.Join(dir, "kube-apiserver"),
		KubeControllerManager: filepath.Join(dir, "kube-controller-manager"),
		KubeScheduler:         filepath.Join(dir, "kube-scheduler"),
		Kubelet:               filepath.Join(dir, "kubelet"),
		Kubectl:               filepath.Join(dir, "kubectl"),
	}
}

// names lists the binary names of cmds.
func names(cmds []struct{ name, pkg string }) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.name)
	}
	return out
}

// ToolsDir is the tool cache (toolcache.Dir), named here for this package's many callers.
func ToolsDir(getenv func(string) string) (string, error) { return toolcache.Dir(getenv) }

// Build returns the Kubernetes set (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
// kubectl, kube-proxy) from toolsDir/kubernetes-<KubernetesVersion> and toolsDir/kube-proxy-<KubernetesVersion>,
// building them first when they are not there: the commands of a set in one `go build` of one throwaway module,
// so the packages they share compile once. A set appears atomically (built in a temporary directory, then
// renamed), and concurrent callers wait for one build through a lock file. Progress goes to log; a cold build
// takes ten minutes or more on two busy cores.
func Build(ctx context.Context, toolsDir string, log io.Writer) (Binaries, error) {
	what := fmt.Sprintf("Kubernetes %s (etcd %s)", KubernetesVersion, EtcdVersion)
	dir, err := buildCached(ctx, toolsDir, "kubernetes-"+KubernetesVersion, names(commands), what, log,
		func(ctx context.Context, work, out string, log io.Writer) error {
			return buildSet(ctx, commands, work, out, log)
		})
	if err != nil {
		return Binaries{}, err
	}
	nodeDir, err := buildCached(ctx, toolsDir, "kube-proxy-"+KubernetesVersion, names(nodeCommands), "kube-proxy "+KubernetesVersion, log,
		func(ctx context.Context, work, out string, log io.Writer) error {
			return buildSet(ctx, nodeCommands, work, out, log)
		})
	if err != nil {
		return Binaries{}, err
	}
	b := binariesIn(dir)
	b.KubeProxy = filepath.Join(nodeDir, "kube-proxy")
	return b, nil
}

// buildCached returns toolsDir/<name>, which must hold files, building it first when it is missing: build writes
// the files into out, a directory beside its scratch directory work, and out is renamed into place only once
// build succeeded. A lock file makes concurrent callers wait for one build.
func buildCached(ctx context.Context, toolsDir, name string, files []string, what string, log io.Writer,
	build func(ctx context.Context, work, out string, log io.Writer) error) (string, error) {
	dir := filepath.Join(toolsDir, name)
	if ok, err := complete(dir, files); ok || err != nil {
		return dir, err
	}
	if err := os.MkdirAll(toolsDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := toolcache.Lock(ctx, filepath.Join(toolsDir, "."+name+".lock"), "kubernetes", log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if ok, err := complete(dir, files); ok || err != nil { // built by whoever held the lock before us
		return dir, err
	}
	work, err := os.MkdirTemp(toolsDir, "."+name+"-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	fmt.Fprintf(log, "tools: building %s into %s; minutes on a cold cache\n", what, dir)
	out := filepath.Join(work, "bin")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	if err := build(ctx, work, out, log); err != nil {
		return "", err
	}
	if ok, err := complete(out, files); !ok || err != nil {
		return "", fmt.Errorf("building %s left an incomplete set in %s: %v", what, out, err)
	}
	if err := os.Rename(out, dir); err != nil {
		return "", fmt.Errorf("publishing %s: %w", dir, err)
	}
	fmt.Fprintf(log, "tools: built %s\n", dir)
	return dir, nil
}

// complete reports whether dir holds every file. A directory that exists but lacks one was not made by
// buildCached (which renames only a finished set into place): that is an error naming what to delete.
func complete(dir string, files []string) (bool, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
			return false, fmt.Errorf("%s exists but has no usable %s: delete the directory to rebuild it", dir, f)
		}
	}
	return true, nil
}

// buildSet writes the throwaway module into work and builds every command of cmds into out.
func buildSet(ctx context.Context, cmds []struct{ name, pkg string }, work, out string, log io.Writer) error {
	if err := writeModule(ctx, work, log); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-ldflags", versionLDFlags(), "-o", out + "/"}
	for _, c := range cmds {
		args = append(args, c.pkg)
	}
	if err := goCmd(ctx, work, log, args...); err != nil {
		return err
	}
	// go build names a command after its package path, skipping a major-version suffix: etcd's is "server".
	for _, c := range cmds {
		if c.name == "etcd" {
			if err := os.Rename(filepath.Join(out, "server"), filepath.Join(out, "etcd")); err != nil {
				return fmt.Errorf("naming the etcd binary: %w", err)
			}
		}
	}
	return nil
}

// writeModule writes the throwaway module of every Kubernetes build into work: k8s.io/kubernetes and etcd's server
// at their versions, so that every build resolves the same dependency versions and shares the Go build cache.
func writeModule(ctx context.Context, work string, log io.Writer) error {
	mod := "module kubernetesbuild\n\ngo 1.26\n\nrequire (\n\tk8s.io/kubernetes " + KubernetesVersion +
		"\n\tgo.etcd.io/etcd/server/v3 " + EtcdVersion + "\n)\n"
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	staging, err := stagingModules(ctx, work)
	if err != nil {
		return err
	}
	// k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with ./staging; the proxy serves
	// them only under their own tags, v0.<minor>.<patch>.
	args := []string{"mod", "edit"}
	for _, m := range staging {
		args = append(args, "-replace="+m+"="+m+"@"+StagingVersion())
	}
	return goCmd(ctx, work, log, args...)
}

// StagingVersion is the version of the k8s.io staging modules (k8s.io/api, client-go, ...) released with
// KubernetesVersion: v1.36.2 → v0.36.2.
func StagingVersion() string { return "v0." + strings.TrimPrefix(KubernetesVersion, "v1.") }

// versionLDFlags stamps the Kubernetes version into the binaries as the release build does, so the node and the
// API server report v1.36.2 instead of v0.0.0-master; -s -w drop the symbol table and DWARF (a third smaller).
func versionLDFlags() string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(KubernetesVersion, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	flags := []string{"-s", "-w"}
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X", pkg+".gitVersion="+KubernetesVersion,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
		)
	}
	return strings.Join(flags, " ")
}

// stagingModules lists the modules k8s.io/kubernetes replaces with ./staging directories.
func stagingModules(ctx context.Context, dir string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@"+KubernetesVersion)
	cmd.Dir, cmd.Env = dir, goEnv()
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@%s: %w", KubernetesVersion, err)
	}
	var info struct{ GoMod string }
	if err := json.Unmarshal(b, &info); err != nil || info.GoMod == "" {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes: no GoMod in %q: %v", b, err)
	}
	f, err := os.Open(info.GoMod)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mods, err := parseStagingReplaces(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", info.GoMod, err)
	}
	return mods, nil
}

// parseStagingReplaces returns the modules a go.mod replaces with ./staging/ directories.
func parseStagingReplaces(r io.Reader) ([]string, error) {
	var mods []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "replace "))
		if len(fields) >= 3 && fields[1] == "=>" && strings.HasPrefix(fields[2], "./staging/") {
			mods = append(mods, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(mods) == 0 {
		return nil, errors.New("no ./staging replacements")
	}
	return mods, nil
}

func goCmd(ctx context.Context, dir string, log io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, goEnv()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return nil
}

// goEnv is the environment of the throwaway build: outside the workspace, resolving modules freely, static.
func goEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOFLAGS=") && !strings.HasPrefix(e, "GOWORK=") && !strings.HasPrefix(e, "CGO_ENABLED=") {
			env = append(env, e)
		}
	}
	return append(env, "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
}
