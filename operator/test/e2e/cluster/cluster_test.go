package cluster

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "operator", "test", "e2e")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RepoRoot(deep); err == nil {
		t.Fatal("RepoRoot without go.work: want an error")
	}
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RepoRoot(deep)
	if err != nil || got != root {
		t.Fatalf("RepoRoot = %q, %v; want %q", got, err, root)
	}
}

func TestDecodeAllSkipsEmptyDocuments(t *testing.T) {
	objs, err := decodeAll([]byte("# comment\n---\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "A" || objs[1].GetName() != "b" {
		t.Fatalf("decodeAll = %v", objs)
	}
	if _, err := decodeAll([]byte("kind: [")); err == nil {
		t.Fatal("malformed YAML: want an error")
	}
}

func TestGoEnvLeavesTheWorkspace(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=readonly")
	t.Setenv("GOWORK", "/somewhere/go.work")
	env := goEnv()
	var goflags, gowork []string
	for _, e := range env {
		switch {
		case len(e) > 8 && e[:8] == "GOFLAGS=":
			goflags = append(goflags, e)
		case len(e) > 7 && e[:7] == "GOWORK=":
			gowork = append(gowork, e)
		}
	}
	if len(goflags) != 1 || goflags[0] != "GOFLAGS=-mod=mod" || len(gowork) != 1 || gowork[0] != "GOWORK=off" {
		t.Fatalf("GOFLAGS %v GOWORK %v", goflags, gowork)
	}
}
