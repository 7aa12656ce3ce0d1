package gobuild

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
)

// newWorkspace writes a one-module workspace whose program prints its stamped version.
func newWorkspace(t *testing.T) (string, Program) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.work":      "go 1.26\n\nuse ./hello\n",
		"hello/go.mod": "module example.com/hello\n\ngo 1.26\n",
		"hello/pkg/version/version.go": "package version\n\nvar (\n\tversion = \"unset\"\n\tcommit = \"unset\"\n\ttreeState = \"unset\"\n)\n\n" +
			"func String() string { return version + \" \" + commit + \" \" + treeState }\n",
		// Like the driver and the operator, it uses crypto and the net package (whose resolver uses cgo when
		// cgo is on, so FIPS builds link dynamically).
		"hello/cmd/hello/main.go": "package main\n\nimport (\n\t\"crypto/sha256\"\n\t\"fmt\"\n\t\"net\"\n\n\t\"example.com/hello/pkg/version\"\n)\n\n" +
			"func main() {\n\tfmt.Println(version.String())\n\t_, _ = sha256.Sum256(nil), net.ParseIP(\"127.0.0.1\")\n}\n",
		"hello/cmd/hello/main_test.go": "package main\n",
	}
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, Program{Module: "hello", ModulePath: "example.com/hello", Binary: "hello",
		VersionPackage: "example.com/hello/pkg/version"}
}

func options(root string, p Program, progress io.Writer) Options {
	return Options{
		Root:      root,
		OutDir:    filepath.Join(root, "_output", "bin"),
		Programs:  []Program{p},
		Platforms: []platform.Platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "s390x"}},
		Stamps:    map[string]stamp.Stamp{"hello": {Version: "v1.2.3", Commit: "0123456789abcdef", Dirty: true}},
		Jobs:      2,
		Progress:  progress,
	}
}

func TestBuildStampsCrossCompilesAndSkipsUnchanged(t *testing.T) {
	root, prog := newWorkspace(t)
	var progress bytes.Buffer
	opts := options(root, prog, &progress)

	results, err := Build(t.Context(), opts)
	if err != nil {
		t.Fatalf("Build: %v\n%s", err, progress.String())
	}
	if len(results) != 2 || !results[0].Compiled || !results[1].Compiled {
		t.Fatalf("first build results = %+v, want two compiled artefacts", results)
	}
	wantMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "s390x": elf.EM_S390}
	sums := map[string][]byte{}
	for _, r := range results {
		f, err := elf.Open(r.Path)
		if err != nil {
			t.Fatalf("%s: %v", r.Path, err)
		}
		if f.Machine != wantMachine[r.Artefact.Platform.Arch] {
			t.Errorf("%s: ELF machine %v, want %v", r.Path, f.Machine, wantMachine[r.Artefact.Platform.Arch])
		}
		f.Close()
		sums[r.Path], _ = os.ReadFile(r.Path)
	}
	if filepath.Base(filepath.Dir(results[0].Path)) != "linux_amd64" {
		t.Errorf("binary written to %s, want …/linux_amd64/hello", results[0].Path)
	}

	out, err := exec.CommandContext(t.Context(), results[0].Path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "v1.2.3 0123456789abcdef dirty" {
		t.Fatalf("stamped binary prints %q", got)
	}

	// Unchanged inputs: nothing is recompiled, and the progress says so.
	progress.Reset()
	results, err = Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Compiled {
			t.Errorf("%s recompiled with unchanged inputs", r.Artefact)
		}
	}
	if strings.Count(progress.String(), "up to date, not recompiled") != 2 {
		t.Errorf("progress does not report both artefacts up to date:\n%s", progress.String())
	}

	// A test file is not an input of the binary.
	if err := os.WriteFile(filepath.Join(root, "hello/cmd/hello/main_test.go"), []byte("package main\n\n// edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if results, _ = Build(t.Context(), opts); results[0].Compiled {
		t.Error("editing a _test.go file recompiled the binary")
	}

	// Removing the output and building again gives byte-identical binaries.
	if err := os.RemoveAll(opts.OutDir); err != nil {
		t.Fatal(err)
	}
	if results, err = Build(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		again, _ := os.ReadFile(r.Path)
		if !bytes.Equal(again, sums[r.Path]) {
			t.Errorf("%s differs between two clean builds", r.Artefact)
		}
	}

	// A new stamp (another commit) is a changed input.
	opts.Stamps["hello"] = stamp.Stamp{Version: "v1.2.3", Commit: "fedcba9876543210"}
	if results, _ = Build(t.Context(), opts); !results[0].Compiled {
		t.Error("a new commit did not recompile")
	}
}

func TestBuildRebuildsTamperedBinary(t *testing.T) {
	root, prog := newWorkspace(t)
	opts := options(root, prog, io.Discard)
	opts.Platforms = opts.Platforms[:1]
	results, err := Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(results[0].Path, []byte("not a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if results, err = Build(t.Context(), opts); err != nil || !results[0].Compiled {
		t.Fatalf("tampered binary: Compiled = %v, err = %v; want a rebuild", results[0].Compiled, err)
	}
}

func TestBuildFailureKeepsPreviousBinaryAndNamesArtefact(t *testing.T) {
	root, prog := newWorkspace(t)
	opts := options(root, prog, io.Discard)
	opts.Platforms = opts.Platforms[:1]
	results, err := Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(results[0].Path)
	if err := os.WriteFile(filepath.Join(root, "hello/cmd/hello/main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Build(t.Context(), opts)
	if err == nil || !strings.Contains(err.Error(), "compiling hello linux/amd64") || !strings.Contains(err.Error(), "undefined") {
		t.Fatalf("Build error = %v, want the artefact and the compiler message", err)
	}
	still, _ := os.ReadFile(results[0].Path)
	if !bytes.Equal(still, good) {
		t.Fatal("a failed compile replaced the previous binary")
	}
	if _, err := os.Stat(results[0].Path + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("partial output left behind: %v", err)
	}
}

func TestBuildRequiresAStampPerModule(t *testing.T) {
	root, prog := newWorkspace(t)
	opts := options(root, prog, io.Discard)
	opts.Stamps = nil
	if _, err := Build(t.Context(), opts); err == nil || !strings.Contains(err.Error(), `no version stamp for module "hello"`) {
		t.Fatalf("Build = %v, want a missing stamp error", err)
	}
}
