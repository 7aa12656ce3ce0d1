package workspace

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRootAndModules(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.work"), "go 1.26\n\nuse (\n\t./b\n\t./a\n)\n")
	write(t, filepath.Join(root, "a", "go.mod"), "module example.com/a\n\ngo 1.26\n")
	write(t, filepath.Join(root, "b", "go.mod"), "module example.com/b\n\ngo 1.26\n")
	nested := filepath.Join(root, "a", "pkg", "deep")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Root(nested)
	if err != nil || got != root {
		t.Fatalf("Root = %q, %v; want %q", got, err, root)
	}
	mods, err := Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Module{{Dir: "b", Path: "example.com/b"}, {Dir: "a", Path: "example.com/a"}}
	if !reflect.DeepEqual(mods, want) {
		t.Fatalf("Modules = %+v, want %+v", mods, want)
	}
}

func TestModulesErrors(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.work"), "go 1.26\n\nuse ./missing\n")
	if _, err := Modules(root); err == nil || !strings.Contains(err.Error(), "go.work uses ./missing") {
		t.Fatalf("Modules = %v, want an error naming ./missing", err)
	}
	if _, err := Root(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no go.work found") {
		t.Fatalf("Root = %v, want no go.work error", err)
	}
}
