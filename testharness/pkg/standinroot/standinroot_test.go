package standinroot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The hook, run on a tree shaped like Debian's trust store, leaves RHEL 9's: every path a program reads resolves
// to /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem, and no per-certificate file is left to trust besides it.
func TestTrustStoreHookLaysOutRHELsTrustStore(t *testing.T) {
	root := t.TempDir()
	certs := filepath.Join(root, "etc/ssl/certs")
	if err := os.MkdirAll(certs, 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(certs, "ca-certificates.crt"), []byte("debian bundle\n"), 0o644))
	must(t, os.Symlink("/usr/share/ca-certificates/mozilla/X.crt", filepath.Join(certs, "X.pem")))
	must(t, os.Symlink("X.pem", filepath.Join(certs, "0123abcd.0")))
	lib := filepath.Join(root, "usr/lib/ssl")
	must(t, os.MkdirAll(lib, 0o755))
	must(t, os.Symlink("/etc/ssl/certs/ca-certificates.crt", filepath.Join(lib, "cert.pem")))

	cmd := exec.Command("sh", "-c", TrustStoreHook, "exec", root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hook: %v\n%s", err, out)
	}
	bundle := filepath.Join(root, "etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem")
	if b, err := os.ReadFile(bundle); err != nil || string(b) != "debian bundle\n" {
		t.Fatalf("%s = %q, %v; want Debian's bundle moved there", bundle, b, err)
	}
	// Absolute links inside the root point at the host; resolve them against the root as the container would.
	for _, p := range []string{
		"etc/ssl/certs/ca-certificates.crt", // Go's first candidate, Debian's certifi
		"etc/pki/tls/certs/ca-bundle.crt",   // RHEL's name, Go's second candidate
		"etc/pki/tls/cert.pem",              // RHEL OpenSSL's default CA file
		"usr/lib/ssl/cert.pem",              // Debian OpenSSL's default CA file (Python's ssl)
	} {
		if got := resolveIn(t, root, p); got != "etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem" {
			t.Errorf("/%s resolves to /%s; want the mounted bundle's path", p, got)
		}
	}
	names, _ := os.ReadDir(filepath.Join(root, "etc/pki/tls/certs"))
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	if want := []string{"ca-bundle.crt", "ca-certificates.crt"}; !slices.Equal(got, want) {
		t.Errorf("/etc/ssl/certs (= /etc/pki/tls/certs) holds %v; want only %v (no per-certificate files besides the bundle)", got, want)
	}
}

// resolveIn follows symlinks of p inside root, treating absolute targets as relative to root.
func resolveIn(t *testing.T, root, p string) string {
	t.Helper()
	parts := strings.Split(p, "/")
	cur := ""
	for i := 0; i < len(parts); i++ {
		next := filepath.Join(cur, parts[i])
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			t.Fatalf("resolving /%s: %v", p, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(filepath.Join(root, next))
			if filepath.IsAbs(target) {
				next = strings.TrimPrefix(filepath.Clean(target), "/")
			} else {
				next = filepath.Join(cur, target)
			}
			rest := append(strings.Split(next, "/"), parts[i+1:]...)
			return resolveIn(t, root, strings.Join(rest, "/"))
		}
		cur = next
	}
	return cur
}

func TestKeyChangesWithEveryInput(t *testing.T) {
	base := Default()
	keys := map[string]string{"default": base.Key()}
	variants := map[string]func(*Spec){
		"suite":    func(s *Spec) { s.Suite = "trixie" },
		"mirror":   func(s *Spec) { s.Mirrors = append(s.Mirrors[:1:1], "deb http://example.invalid/debian bookworm main") },
		"packages": func(s *Spec) { s.Packages = append(slices.Clone(s.Packages), "curl") },
		"options":  func(s *Spec) { s.Options = append(slices.Clone(s.Options), "--aptopt=x") },
		"hook":     func(s *Spec) { s.Hook += "true\n" },
	}
	for name, change := range variants {
		s := Default()
		change(&s)
		k := s.Key()
		for other, ok := range keys {
			if ok == k {
				t.Errorf("changing the %s gives the key of %s (%s)", name, other, k)
			}
		}
		keys[name] = k
	}
	if Default().Key() != base.Key() {
		t.Error("the key of the same spec changed")
	}
}

// Every RPM of the efs-utils runtime stage has its Debian equivalent in the default package list.
func TestDefaultInstallsEveryRuntimeRPMsEquivalent(t *testing.T) {
	b, err := os.ReadFile("../../../images/aws-efs-utils-base/Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "dnf install")
	end := strings.Index(text[start:], "&&")
	var rpms []string
	for _, f := range strings.Fields(strings.ReplaceAll(text[start:start+end], "\\", " ")) {
		if !strings.HasPrefix(f, "-") && f != "dnf" && f != "install" {
			rpms = append(rpms, f)
		}
	}
	if len(rpms) < 5 {
		t.Fatalf("read only %v from the runtime stage's dnf install", rpms)
	}
	debs := map[string]string{}
	for _, p := range RHELPackages {
		debs[p.RPM] = p.Deb
	}
	pkgs := Default().Packages
	for _, rpm := range rpms {
		deb, ok := debs[rpm]
		if !ok {
			t.Errorf("RPM %s of the runtime stage has no Debian equivalent in RHELPackages", rpm)
			continue
		}
		if !slices.Contains(pkgs, deb) {
			t.Errorf("RPM %s: its Debian equivalent %s is not installed by Default", rpm, deb)
		}
	}
}

// A cached tarball is returned without running mmdebstrap, and concurrent callers agree on it.
func TestBuildReturnsTheCachedTarball(t *testing.T) {
	tools := t.TempDir()
	s := Default()
	want := filepath.Join(tools, "debian-root", s.FileName())
	must(t, os.MkdirAll(filepath.Dir(want), 0o755))
	must(t, os.WriteFile(want, []byte("tar"), 0o644))
	t.Setenv("PATH", t.TempDir()) // no mmdebstrap: a build would fail
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			got, err := Build(context.Background(), s, tools, &strings.Builder{})
			if err != nil || got != want {
				t.Errorf("Build = %q, %v; want the cached %q", got, err, want)
			}
		})
	}
	wg.Wait()
}

func TestBuildNamesTheMissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Build(context.Background(), Default(), t.TempDir(), &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y mmdebstrap") {
		t.Fatalf("Build without mmdebstrap = %v; want the install command", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fakeMmdebstrap puts an mmdebstrap on PATH that counts its runs in count and writes "root" to its target (the
// argument after the suite), or fails when fail is set.
func fakeMmdebstrap(t *testing.T, count string, fail bool) {
	t.Helper()
	bin := t.TempDir()
	script := "#!/bin/sh\necho run >> " + count + "\nsleep 0.3\n"
	if fail {
		script += "echo partial > \"$(for a; do [ \"$prev\" = bookworm ] && echo \"$a\" && break; prev=$a; done)\"\nexit 3\n"
	} else {
		script += "for a; do [ \"$prev\" = bookworm ] && echo root > \"$a\" && break; prev=$a; done\n"
	}
	must(t, os.WriteFile(filepath.Join(bin, "mmdebstrap"), []byte(script), 0o755))
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
}

// Concurrent builds run mmdebstrap once and all return the finished file; a failed run leaves no file behind.
func TestBuildRunsMmdebstrapOnceAndPublishesOnlyAFinishedRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("Build runs mmdebstrap --mode=root, which needs root; go tool mage test runs as root")
	}
	tools := t.TempDir()
	count := filepath.Join(t.TempDir(), "runs")
	fakeMmdebstrap(t, count, true)
	var log strings.Builder
	if _, err := Build(context.Background(), Default(), tools, &log); err == nil || !strings.Contains(err.Error(), "mmdebstrap bookworm") {
		t.Fatalf("Build with a failing mmdebstrap = %v; want its error", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tools, "debian-root", "*.tar")); len(left) > 0 {
		t.Fatalf("a failed build left %v", left)
	}
	if tmp, _ := filepath.Glob(filepath.Join(tools, "debian-root", ".build-*")); len(tmp) > 0 {
		t.Fatalf("a failed build left its temporary file %v", tmp)
	}
	must(t, os.Remove(count))

	fakeMmdebstrap(t, count, false)
	var wg sync.WaitGroup
	paths := make([]string, 3)
	for i := range paths {
		wg.Go(func() {
			p, err := Build(context.Background(), Default(), tools, &strings.Builder{})
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		})
	}
	wg.Wait()
	runs, _ := os.ReadFile(count)
	if n := strings.Count(string(runs), "run"); n != 1 {
		t.Errorf("mmdebstrap ran %d times for three concurrent builds; want once", n)
	}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err != nil || string(b) != "root\n" || p != paths[0] {
			t.Errorf("Build returned %s (%q, %v); want the one finished root %s", p, b, err, paths[0])
		}
	}
}
