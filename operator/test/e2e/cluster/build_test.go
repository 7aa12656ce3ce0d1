package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStagingReplaces(t *testing.T) {
	gomod := `module k8s.io/kubernetes

require k8s.io/api v0.0.0

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/streaming => ./staging/src/k8s.io/streaming
	github.com/x/y => github.com/x/y v1.0.0
)

replace k8s.io/kubelet => ./staging/src/k8s.io/kubelet
`
	got, err := parseStagingReplaces(strings.NewReader(gomod))
	if err != nil {
		t.Fatal(err)
	}
	if want := "k8s.io/api k8s.io/streaming k8s.io/kubelet"; strings.Join(got, " ") != want {
		t.Fatalf("parseStagingReplaces = %v; want %s", got, want)
	}
	if _, err := parseStagingReplaces(strings.NewReader("module x\n")); err == nil {
		t.Fatal("a go.mod without staging replacements: want an error")
	}
}

func TestVersionLDFlagsStampTheKubernetesVersion(t *testing.T) {
	flags := versionLDFlags()
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=" + KubernetesVersion,
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=36",
		"-X k8s.io/client-go/pkg/version.gitVersion=" + KubernetesVersion,
	} {
		if !strings.Contains(flags, want) {
			t.Errorf("versionLDFlags() = %q; missing %q", flags, want)
		}
	}
	if StagingVersion() != "v0.36.2" {
		t.Errorf("StagingVersion() = %q; want v0.36.2", StagingVersion())
	}
}

// A finished set in the cache is used as it is: Build runs no go command (PATH is empty here, so it could not).
func TestBuildReusesACachedSet(t *testing.T) {
	tools := t.TempDir()
	dir := filepath.Join(tools, "kubernetes-"+KubernetesVersion)
	writeSet(t, dir, commands)
	nodeDir := filepath.Join(tools, "kube-proxy-"+KubernetesVersion)
	writeSet(t, nodeDir, nodeCommands)
	t.Setenv("PATH", "")
	var log bytes.Buffer
	got, err := Build(t.Context(), tools, &log)
	if err != nil {
		t.Fatal(err)
	}
	want := binariesIn(dir)
	want.KubeProxy = filepath.Join(nodeDir, "kube-proxy")
	if got != want || got.Kubelet != filepath.Join(dir, "kubelet") {
		t.Fatalf("Build = %+v; want the sets in %s and %s", got, dir, nodeDir)
	}
}

func TestBuildRefusesAnIncompleteSet(t *testing.T) {
	tools := t.TempDir()
	dir := filepath.Join(tools, "kubernetes-"+KubernetesVersion)
	writeSet(t, dir, commands)
	if err := os.Remove(filepath.Join(dir, "kubelet")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "")
	_, err := Build(t.Context(), tools, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no usable kubelet") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Build with a set missing kubelet: %v; want an error naming kubelet and %s", err, dir)
	}
}

func writeSet(t *testing.T, dir string, cmds []struct{ name, pkg string }) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		if err := os.WriteFile(filepath.Join(dir, c.name), []byte("#!/bin/false\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCopyTreeMakesAWritableCopy(t *testing.T) {
	from := t.TempDir()
	if err := os.MkdirAll(filepath.Join(from, "cmd", "x"), 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(from, "go.mod"), []byte("module x\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), "src")
	if err := copyTree(from, to); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(to, "go.mod"))
	if err != nil || string(b) != "module x\n" {
		t.Fatalf("copied go.mod = %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(to, "go.sum"), nil, 0o644); err != nil {
		t.Fatalf("the copy is not writable (go build -mod=mod updates go.sum): %v", err)
	}
	if st, err := os.Stat(filepath.Join(to, "cmd", "x")); err != nil || !st.IsDir() {
		t.Fatalf("directory cmd/x not copied: %v", err)
	}
}

func TestBuildToolReusesACachedBinary(t *testing.T) {
	tools := t.TempDir()
	tool := Tool{Name: "csi-provisioner", Module: "github.com/kubernetes-csi/external-provisioner/v5", Version: "v5.3.0", Package: "./cmd/csi-provisioner"}
	dir := filepath.Join(tools, "csi-provisioner-v5.3.0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "csi-provisioner"), []byte("#!/bin/false\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "")
	got, err := BuildTool(t.Context(), tools, tool, &bytes.Buffer{})
	if err != nil || got != filepath.Join(dir, "csi-provisioner") {
		t.Fatalf("BuildTool = %q, %v; want the cached %s", got, err, filepath.Join(dir, "csi-provisioner"))
	}
}
