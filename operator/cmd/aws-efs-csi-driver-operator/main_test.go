package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestVersionFlagPrintsProvenance(t *testing.T) {
	var out bytes.Buffer
	cmd := newRootCommand(&out)
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("--version: %v", err)
	}
	if !strings.HasPrefix(out.String(), "aws-efs-csi-driver-operator version=") {
		t.Fatalf("--version printed %q", out.String())
	}
}

func TestUnknownFlagFails(t *testing.T) {
	cmd := newRootCommand(io.Discard)
	cmd.SetArgs([]string{"--no-such-flag"})
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Fatal("unknown flag: want an error")
	}
}

func TestStartIsTheControllerCommand(t *testing.T) {
	cmd := newRootCommand(io.Discard)
	start, _, err := cmd.Find([]string{"start"})
	if err != nil || start.Name() != "start" {
		t.Fatalf("no start command: %v", err)
	}
	for _, flag := range []string{"kubeconfig", "namespace", "config", "terminate-on-files"} {
		if start.Flags().Lookup(flag) == nil {
			t.Errorf("start has no --%s flag; want library-go's controller command", flag)
		}
	}
}

func TestStartAcceptsTheCSVArguments(t *testing.T) {
	cmd := newRootCommand(io.Discard)
	start, rest, err := cmd.Find([]string{"start", "-v=2", "--terminate-on-files=/var/run/secrets/serving-cert/tls.crt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := start.ParseFlags(rest); err != nil {
		t.Fatalf("start %v: %v", rest, err)
	}
	if v := start.Flags().Lookup("v"); v == nil || v.Value.String() != "2" {
		t.Fatalf("-v = %v", v)
	}
}
