package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Versions of the control plane. kube-apiserver matches the operator's k8s.io/client-go (v0.36.2).
const (
	KubernetesVersion = "v1.36.2"
	EtcdVersion       = "v3.6.6"
)

// Binaries are the paths of the built control plane.
type Binaries struct {
	Etcd          string
	KubeAPIServer string
}

// RepoRoot returns the directory holding go.work, searching upwards from dir.
func RepoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s", dir)
		}
	}
}

// Build builds etcd and kube-apiserver into toolsDir (normally <repo>/_output/e2e-tools), reusing binaries built
// before for the same versions. Progress goes to log; a cold build takes several minutes on two cores.
func Build(ctx context.Context, toolsDir string, log io.Writer) (Binaries, error) {
	etcd, err := buildEtcd(ctx, filepath.Join(toolsDir, "etcd-"+EtcdVersion), log)
	if err != nil {
		return Binaries{}, err
	}
	kas, err := buildKubeAPIServer(ctx, filepath.Join(toolsDir, "kube-apiserver-"+KubernetesVersion), log)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Etcd: etcd, KubeAPIServer: kas}, nil
}

func buildEtcd(ctx context.Context, dir string, log io.Writer) (string, error) {
	out := filepath.Join(dir, "etcd")
	if fileExists(out) {
		fmt.Fprintf(log, "e2e: using cached %s\n", out)
		return out, nil
	}
	fmt.Fprintf(log, "e2e: building etcd %s into %s\n", EtcdVersion, dir)
	if err := initModule(ctx, dir, "etcdbuild", log); err != nil {
		return "", err
	}
	if err := goCmd(ctx, dir, log, "mod", "edit", "-require=go.etcd.io/etcd/server/v3@"+EtcdVersion); err != nil {
		return "", err
	}
	return out, buildBinary(ctx, dir, out, "go.etcd.io/etcd/server/v3", log)
}

func buildKubeAPIServer(ctx context.Context, dir string, log io.Writer) (string, error) {
	out := filepath.Join(dir, "kube-apiserver")
	if fileExists(out) {
		fmt.Fprintf(log, "e2e: using cached %s\n", out)
		return out, nil
	}
	fmt.Fprintf(log, "e2e: building kube-apiserver %s into %s (several minutes on a cold cache)\n", KubernetesVersion, dir)
	if err := initModule(ctx, dir, "kasbuild", log); err != nil {
		return "", err
	}
	if err := goCmd(ctx, dir, log, "mod", "edit", "-require=k8s.io/kubernetes@"+KubernetesVersion); err != nil {
		return "", err
	}
	staging, err := stagingModules(ctx, dir)
	if err != nil {
		return "", err
	}
	// k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with ./staging; the proxy serves
	// them only under their own tags, v0.<minor>.<patch>.
	stagingVersion := "v0." + strings.TrimPrefix(KubernetesVersion, "v1.")
	args := []string{"mod", "edit"}
	for _, m := range staging {
		args = append(args, "-replace="+m+"="+m+"@"+stagingVersion)
	}
	if err := goCmd(ctx, dir, log, args...); err != nil {
		return "", err
	}
	return out, buildBinary(ctx, dir, out, "k8s.io/kubernetes/cmd/kube-apiserver", log)
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
	var mods []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 3 && fields[1] == "=>" && strings.HasPrefix(fields[2], "./staging/") {
			mods = append(mods, fields[0])
		}
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("no ./staging replacements in %s", info.GoMod)
	}
	return mods, sc.Err()
}

func initModule(ctx context.Context, dir, name string, log io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	return nil
}

// buildBinary builds pkg into out through a temporary name, so an interrupted build never leaves a binary behind.
func buildBinary(ctx context.Context, dir, out, pkg string, log io.Writer) error {
	tmp := out + ".tmp"
	if err := goCmd(ctx, dir, log, "build", "-o", tmp, pkg); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Fprintf(log, "e2e: built %s\n", out)
	return nil
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

// goEnv is the environment of the throwaway builds: outside the workspace, resolving modules freely.
func goEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOFLAGS=") && !strings.HasPrefix(e, "GOWORK=") {
			env = append(env, e)
		}
	}
	return append(env, "GOWORK=off", "GOFLAGS=-mod=mod")
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Size() > 0
}
