package verify

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cleanWorkspace is a two-module workspace with no dependencies that passes every check.
func cleanWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"go.work":  "go 1.26\n\nuse (\n\t./a\n\t./b\n)\n",
		"a/go.mod": "module example.com/a\n\ngo 1.26\n",
		"a/a.go":   "package a\n\n// A is a.\nfunc A() int { return 1 }\n",
		"b/go.mod": "module example.com/b\n\ngo 1.26\n",
		"b/b.go":   "package b\n\n// B is b.\nfunc B() int { return 2 }\n",
	})
	return root
}

func runCheck(t *testing.T, root, name string) error {
	t.Helper()
	for _, c := range Checks() {
		if c.Name == name {
			return Run(t.Context(), root, []Check{c}, io.Discard)
		}
	}
	t.Fatalf("no check %q", name)
	return nil
}

func TestCleanWorkspacePasses(t *testing.T) {
	root := cleanWorkspace(t)
	if err := Run(t.Context(), root, Checks(), io.Discard); err != nil {
		t.Fatal(err)
	}
}

func TestFailuresNameTheFiles(t *testing.T) {
	tests := []struct {
		name  string
		check string
		files map[string]string
		want  []string
	}{
		{
			name:  "unformatted",
			check: "gofmt",
			files: map[string]string{"b/ugly.go": "package b\nfunc   Ugly( ) {}\n"},
			want:  []string{"b/ugly.go", "gofmt -w"},
		},
		{
			name:  "vet finding",
			check: "go vet",
			files: map[string]string{"a/bad.go": "package a\n\nimport \"fmt\"\n\n// Bad is bad.\nfunc Bad() string { return fmt.Sprintf(\"%d\", \"x\") }\n"},
			want:  []string{"module a", "bad.go"},
		},
		{
			name:  "untidy go.mod",
			check: "go mod tidy",
			files: map[string]string{"b/go.mod": "module example.com/b\n\ngo 1.26\n\nrequire golang.org/x/sync v0.19.0\n"},
			want:  []string{"b/go.mod"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := cleanWorkspace(t)
			writeFiles(t, root, tt.files)
			err := runCheck(t, root, tt.check)
			if err == nil {
				t.Fatalf("%s passed on a broken tree", tt.check)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestWorkSyncReportsAndRestores(t *testing.T) {
	root := cleanWorkspace(t)
	// a and b need different versions of one dependency; go work sync raises b's requirement.
	writeFiles(t, root, map[string]string{
		"a/go.mod": "module example.com/a\n\ngo 1.26\n\nrequire golang.org/x/sync v0.19.0\n",
		"a/a.go":   "package a\n\nimport _ \"golang.org/x/sync/errgroup\"\n",
		"b/go.mod": "module example.com/b\n\ngo 1.26\n\nrequire golang.org/x/sync v0.18.0\n",
		"b/b.go":   "package b\n\nimport _ \"golang.org/x/sync/errgroup\"\n",
	})
	before, _ := os.ReadFile(filepath.Join(root, "b/go.mod"))
	t.Setenv("GOFLAGS", "-mod=mod")
	err := runCheck(t, root, "go work sync")
	if err == nil || !strings.Contains(err.Error(), "b/go.mod") {
		t.Fatalf("go work sync check = %v, want it to name b/go.mod", err)
	}
	after, _ := os.ReadFile(filepath.Join(root, "b/go.mod"))
	if string(after) != string(before) {
		t.Fatalf("b/go.mod was left modified:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work.sum")); err == nil {
		t.Fatal("go.work.sum created by the check was left behind")
	}
}
