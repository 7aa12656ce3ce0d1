package stamp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newRepo creates a git repository with a committed driver/VERSION file.
func newRepo(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "driver"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "driver", "VERSION"), []byte(version), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestResolveFromVersionFile(t *testing.T) {
	dir := newRepo(t, "0.3.1\n")
	got, err := Resolve(t.Context(), dir, "driver")
	if err != nil {
		t.Fatal(err)
	}
	want := Stamp{Version: "v0.3.1", Commit: git(t, dir, "rev-parse", "HEAD"), Dirty: false}
	if got != want {
		t.Fatalf("Resolve = %+v, want %+v", got, want)
	}
}

func TestResolveTagWinsAndHighestTagIsChosen(t *testing.T) {
	dir := newRepo(t, "0.3.1")
	git(t, dir, "tag", "driver/v1.2.0")
	git(t, dir, "tag", "driver/v1.10.0")
	git(t, dir, "tag", "operator/v9.9.9") // another module's tag is not ours
	got, err := Resolve(t.Context(), dir, "driver")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "v1.10.0" {
		t.Fatalf("Version = %q, want v1.10.0", got.Version)
	}
}

func TestResolveDirtyTree(t *testing.T) {
	dir := newRepo(t, "0.3.1")
	if err := os.WriteFile(filepath.Join(dir, "untracked.go"), []byte("package x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Resolve(t.Context(), dir, "driver")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Dirty || got.TreeState() != "dirty" {
		t.Fatalf("Dirty = %v, TreeState = %q; want dirty", got.Dirty, got.TreeState())
	}
}

func TestResolveErrors(t *testing.T) {
	t.Run("malformed tag", func(t *testing.T) {
		dir := newRepo(t, "0.3.1")
		git(t, dir, "tag", "driver/v1.2")
		_, err := Resolve(t.Context(), dir, "driver")
		wantErr(t, err, `tag "driver/v1.2": want driver/vMAJOR.MINOR.PATCH`)
	})
	t.Run("malformed VERSION", func(t *testing.T) {
		dir := newRepo(t, "one point two")
		_, err := Resolve(t.Context(), dir, "driver")
		wantErr(t, err, `driver/VERSION "one point two": want one line MAJOR.MINOR.PATCH`)
	})
	t.Run("missing VERSION", func(t *testing.T) {
		dir := newRepo(t, "0.1.0")
		_, err := Resolve(t.Context(), dir, "operator")
		wantErr(t, err, "operator/VERSION")
	})
	t.Run("not a git repository", func(t *testing.T) {
		_, err := Resolve(t.Context(), t.TempDir(), "driver")
		wantErr(t, err, "is ")
		wantErr(t, err, "a git clone with at least one commit")
	})
}

func TestParseVersionFile(t *testing.T) {
	tests := []struct {
		content, want, wantErr string
	}{
		{content: "1.2.3", want: "v1.2.3"},
		{content: "v1.2.3\n", want: "v1.2.3"},
		{content: "1.2.3-rc.1", want: "v1.2.3-rc.1"},
		{content: "1.2", wantErr: "want one line MAJOR.MINOR.PATCH"},
		{content: "01.2.3", wantErr: "want one line"},
		{content: "1.2.3\n4.5.6", wantErr: "want one line"},
		{content: "", wantErr: `VERSION ""`},
	}
	for _, tt := range tests {
		got, err := ParseVersionFile("VERSION", tt.content)
		if tt.wantErr != "" {
			wantErr(t, err, tt.wantErr)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseVersionFile(%q) = %q, %v; want %q", tt.content, got, err, tt.want)
		}
	}
}

func FuzzParseVersionFile(f *testing.F) {
	for _, s := range []string{"1.2.3", "v0.0.1-rc.1+meta", "1.2", "", "v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		v, err := ParseVersionFile("VERSION", content)
		if err != nil {
			return
		}
		// An accepted version is its own canonical form.
		again, err := ParseVersionFile("VERSION", v)
		if err != nil || again != v {
			t.Fatalf("ParseVersionFile(%q) = %q, then %q, %v", content, v, again, err)
		}
	})
}

func wantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), substr) {
		t.Fatalf("error = %v, want it to contain %q", err, substr)
	}
}
