package workspacetest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootHoldsGoWork(t *testing.T) {
	root := Root(t)
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("Root = %s, which holds no go.work: %v", root, err)
	}
	if _, err := os.Stat(filepath.Join(root, "magefiles", "pkg", "workspace", "workspacetest")); err != nil {
		t.Fatalf("Root = %s is not the root of this repository: %v", root, err)
	}
}
