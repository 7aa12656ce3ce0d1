package pycompile

import (
	"bytes"
	"encoding/binary"
	"os/exec"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
)

func hostPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "-c", "import sys; print(sys.version_info.minor)").Output()
	if err != nil {
		t.Fatalf("the host's python3 is needed: %v", err)
	}
	var minor int
	for _, c := range strings.TrimSpace(string(out)) {
		minor = minor*10 + int(c-'0')
	}
	p, err := Interpreter(minor)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBytecodeIsUncheckedHashAndReproducible: the .pyc files are PEP 552 unchecked-hash files, the same bytes on
// every run, placed in __pycache__ beside the in-image source, and they name the in-image path.
func TestBytecodeIsUncheckedHashAndReproducible(t *testing.T) {
	python := hostPython(t)
	entries := []layer.Entry{
		{Path: "/usr/lib/aws-efs-utils/efs_utils/__init__.py", Kind: layer.File, Mode: 0o644, Data: []byte("")},
		{Path: "usr/lib/aws-efs-utils/efs_utils/mount.py", Kind: layer.File, Mode: 0o644, Data: []byte("def main():\n    return {'a', 'b', 'c'}\n")},
		{Path: "sbin/mount.efs", Kind: layer.File, Mode: 0o755, Data: []byte("#!/usr/bin/env python3\n")},
		{Path: "usr/lib/aws-efs-utils", Kind: layer.Dir, Mode: 0o755},
	}
	first, err := Bytecode(t.Context(), python, entries)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Bytecode(t.Context(), python, entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || len(second) != 2 {
		t.Fatalf("compiled %d and %d modules, want 2 (scripts without .py are not modules)", len(first), len(second))
	}
	for i, e := range first {
		if !strings.HasPrefix(e.Path, "usr/lib/aws-efs-utils/efs_utils/__pycache__/") || !strings.HasSuffix(e.Path, ".pyc") || e.Mode != 0o644 {
			t.Errorf("entry %s mode %o", e.Path, e.Mode)
		}
		if !bytes.Equal(e.Data, second[i].Data) || e.Path != second[i].Path {
			t.Errorf("%s differs between two runs", e.Path)
		}
		// PEP 552 header: magic, flags (bit 0: hash-based, bit 1: check_source), source hash.
		if flags := binary.LittleEndian.Uint32(e.Data[4:8]); flags != 0b01 {
			t.Errorf("%s: flags %b, want hash-based and unchecked (01)", e.Path, flags)
		}
		if strings.HasSuffix(e.Path, "mount.cpython-"+e.Path[strings.Index(e.Path, "cpython-")+8:]) && !bytes.Contains(e.Data, []byte("/usr/lib/aws-efs-utils/efs_utils/mount.py")) {
			t.Errorf("%s does not name the in-image source path", e.Path)
		}
	}
	if _, err := Bytecode(t.Context(), python, []layer.Entry{{Path: "x.py", Kind: layer.File, Data: []byte("def (:\n")}}); err == nil || !strings.Contains(err.Error(), "compileall") {
		t.Errorf("a syntax error = %v, want the compileall failure", err)
	}
}

func TestInterpreterNamesTheMissingVersion(t *testing.T) {
	if _, err := Interpreter(99); err == nil || !strings.Contains(err.Error(), "needs python3.99 on PATH") {
		t.Fatalf("Interpreter(99) = %v", err)
	}
}
