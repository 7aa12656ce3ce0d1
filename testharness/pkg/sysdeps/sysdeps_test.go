package sysdeps

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
)

// fakeSystem keeps a set of installed packages; Install adds what apt-get install names.
type fakeSystem struct {
	installed map[string]bool
	root      bool
	commands  [][]string
}

func (f *fakeSystem) system() System {
	return System{
		Satisfied:  func(_ context.Context, r Requirement) bool { return f.installed[r.Package] },
		CanInstall: func() bool { return f.root },
		Install: func(_ context.Context, _ io.Writer, argv []string) error {
			f.commands = append(f.commands, argv)
			if argv[1] == "install" {
				for _, p := range argv[4:] {
					f.installed[p] = true
				}
			}
			return nil
		},
	}
}

var reqs = []Requirement{
	{Package: "stunnel4", Command: "stunnel4"},
	{Package: "python3-pytest", PythonModule: "pytest"},
	{Package: "stunnel4", Command: "stunnel"},
}

func TestEnsureNothingMissing(t *testing.T) {
	f := &fakeSystem{installed: map[string]bool{"stunnel4": true, "python3-pytest": true}}
	if err := f.system().Ensure(t.Context(), io.Discard, reqs); err != nil || len(f.commands) != 0 {
		t.Fatalf("Ensure = %v, commands %v; want nothing done", err, f.commands)
	}
}

func TestEnsureInstallsAsRootOnDebian(t *testing.T) {
	f := &fakeSystem{installed: map[string]bool{}, root: true}
	var out bytes.Buffer
	if err := f.system().Ensure(t.Context(), &out, reqs); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"apt-get", "update", "-q"},
		{"apt-get", "install", "-y", "--no-install-recommends", "python3-pytest", "stunnel4"},
	}
	if !reflect.DeepEqual(f.commands, want) {
		t.Fatalf("commands = %v, want %v", f.commands, want)
	}
	if !strings.Contains(out.String(), "installing python3-pytest stunnel4") {
		t.Fatalf("progress = %q", out.String())
	}
}

func TestEnsureElsewhereNamesTheCommand(t *testing.T) {
	f := &fakeSystem{installed: map[string]bool{"stunnel4": true}}
	err := f.system().Ensure(t.Context(), io.Discard, reqs)
	want := "sudo apt-get install -y --no-install-recommends python3-pytest"
	if err == nil || !strings.Contains(err.Error(), want) || len(f.commands) != 0 {
		t.Fatalf("Ensure = %v, commands %v; want an error containing %q and no commands", err, f.commands, want)
	}
}

func TestEnsureReportsPackagesThatDidNotHelp(t *testing.T) {
	f := &fakeSystem{installed: map[string]bool{}, root: true}
	sys := f.system()
	sys.Install = func(context.Context, io.Writer, []string) error { return nil } // installs nothing
	err := sys.Ensure(t.Context(), io.Discard, reqs)
	if err == nil || !strings.Contains(err.Error(), "still missing") {
		t.Fatalf("Ensure = %v, want still missing", err)
	}
}

func TestHostSatisfied(t *testing.T) {
	tests := []struct {
		req  Requirement
		want bool
	}{
		{Requirement{Package: "coreutils", Command: "sh"}, true},
		{Requirement{Package: "none", Command: "no-such-command-anywhere"}, false},
		{Requirement{Package: "base-files", File: "/etc/debian_version"}, true},
		{Requirement{Package: "none", File: "/no/such/file"}, false},
		{Requirement{Package: "none"}, false},
	}
	for _, tt := range tests {
		if got := satisfied(t.Context(), tt.req); got != tt.want {
			t.Errorf("satisfied(%+v) = %v, want %v", tt.req, got, tt.want)
		}
	}
}
