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
