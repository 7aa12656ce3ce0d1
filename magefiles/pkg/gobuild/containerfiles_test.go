package gobuild_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/containerfile"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/gobuild"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// builderOverrides are the settings a builder stage must leave to the builder image: setting them in the stage would
// override the toolchain's (Red Hat's Go reads GOEXPERIMENT; ART's builder sets GOFLAGS), or undo the FIPS mode.
var builderOverrides = []string{"CGO_ENABLED", "GOEXPERIMENT", "GOFLAGS", "GOFIPS140"}

// TestContainerfilesBuildInFIPSMode: what ships is what the CSV's fips-compliant claim is about, so each program's
// image compiles it in its builder stage with `go tool mage build` in the FIPS mode, and nothing in that stage
// overrides the builder's Go settings.
func TestContainerfilesBuildInFIPSMode(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range gobuild.Programs() {
		t.Run(p.Binary, func(t *testing.T) {
			f, err := containerfile.ParseFile(filepath.Join(root, "images", p.Binary, "Containerfile"))
			if err != nil {
				t.Fatal(err)
			}
			var builds int
			for _, s := range f.Stages[:len(f.Stages)-1] {
				for _, e := range containerfile.Commands[*instructions.EnvCommand](&s) {
					for _, kv := range e.Env {
						for _, name := range builderOverrides {
							if kv.Key == name {
								t.Errorf("stage %s sets ENV %s=%s: leave it to the builder image", s.Name, kv.Key, kv.Value)
							}
						}
					}
				}
				for _, r := range containerfile.Commands[*instructions.RunCommand](&s) {
					line := containerfile.RunLine(r)
					for _, name := range builderOverrides {
						if strings.Contains(line, name+"=") {
							t.Errorf("stage %s: RUN %s sets %s: leave it to the builder image", s.Name, line, name)
						}
					}
					for _, cmd := range strings.Split(line, "&&") {
						env, ok := mageBuild(cmd)
						if !ok {
							continue
						}
						builds++
						mode, err := gobuild.ParseMode(env["FIPS"])
						if err != nil || mode != gobuild.FIPS {
							t.Errorf("stage %s: %q runs in mode %v (FIPS=%q, %v); want FIPS=true", s.Name, strings.TrimSpace(cmd), mode, env["FIPS"], err)
						}
						if env["PROGRAMS"] != p.Binary {
							t.Errorf("stage %s: %q builds PROGRAMS=%q; want %s", s.Name, strings.TrimSpace(cmd), env["PROGRAMS"], p.Binary)
						}
						if env["PLATFORMS"] != "linux/$(go env GOARCH)" {
							t.Errorf("stage %s: %q builds PLATFORMS=%q; want the builder's own platform, linux/$(go env GOARCH): FIPS builds use cgo and do not cross-compile", s.Name, strings.TrimSpace(cmd), env["PLATFORMS"])
						}
					}
				}
			}
			if builds != 1 {
				t.Errorf("%d `go tool mage build` commands in the builder stages; want 1", builds)
			}
		})
	}
}

// assignment is one NAME=VALUE word, where VALUE may hold a $(command substitution) with spaces.
var assignment = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)=((?:\$\([^)]*\)|[^\s$])*)`)

// mageBuild reads a shell command of the form `NAME=VALUE... go tool mage build`, returning its assignments.
func mageBuild(cmd string) (map[string]string, bool) {
	prefix, ok := strings.CutSuffix(strings.TrimSpace(cmd), "go tool mage build")
	if !ok {
		return nil, false
	}
	env := map[string]string{}
	for strings.TrimSpace(prefix) != "" {
		m := assignment.FindStringSubmatch(prefix)
		if m == nil {
			return nil, false
		}
		env[m[1]] = m[2]
		prefix = prefix[len(m[0]):]
	}
	return env, true
}

// openShiftBuilderGoFlags is the GOFLAGS OpenShift's Go builder image sets in its environment
// (openshift-eng/ocp-build-data@c1526bfd25324a3d2a021615ac9cbd9fc144037a, branch
// art-rhel-9-golang-1.25-dgk-openshift-golang-builder, Dockerfile: ENV GOFLAGS='-mod=vendor'). hermeto's gomod
// prefetch sets GOMODCACHE and GOPROXY=file:// but no GOFLAGS (hermetoproject/hermeto@fa564006,
// hermeto/core/package_managers/gomod/main.py), so the builder's value holds in a Konflux build.
const openShiftBuilderGoFlags = "-mod=vendor"

// TestBuilderStagesVendorTheWorkspace: with GOFLAGS=-mod=vendor a workspace build needs a vendor directory at the
// workspace root, and we commit none; every builder stage that runs `go tool mage` must write it first with
// `go work vendor` (offline, from the prefetched module cache), or the build fails on its first Konflux run.
func TestBuilderStagesVendorTheWorkspace(t *testing.T) {
	root, err := workspace.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{
		"images/aws-efs-csi-driver/Containerfile",
		"images/aws-efs-csi-driver-operator/Containerfile",
		"operator/manifests/bundle.Containerfile",
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			f, err := containerfile.ParseFile(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			var mageRuns int
			for _, s := range f.Stages {
				for _, r := range containerfile.Commands[*instructions.RunCommand](&s) {
					cmds := strings.Split(containerfile.RunLine(r), "&&")
					for i, cmd := range cmds {
						if !strings.Contains(cmd, "go tool mage") {
							continue
						}
						mageRuns++
						vendored := false
						for _, before := range cmds[:i] {
							if strings.Join(strings.Fields(before), " ") == "go work vendor" {
								vendored = true
							}
						}
						if !vendored {
							t.Errorf("stage %s: %q runs before `go work vendor`: OpenShift's builder sets GOFLAGS=%s, and a workspace build without a vendor directory then fails", s.Name, strings.TrimSpace(cmd), openShiftBuilderGoFlags)
						}
					}
				}
			}
			if mageRuns == 0 {
				t.Errorf("no `go tool mage` in %s: the test no longer knows what the builder stage runs", name)
			}
		})
	}
}
