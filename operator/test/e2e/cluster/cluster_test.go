package cluster

import (
	"testing"
)

func TestDecodeAllSkipsEmptyDocuments(t *testing.T) {
	objs, err := decodeAll([]byte("# comment\n---\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "A" || objs[1].GetName() != "b" {
		t.Fatalf("decodeAll = %v", objs)
	}
	if _, err := decodeAll([]byte("kind: [")); err == nil {
		t.Fatal("malformed YAML: want an error")
	}
}

func TestGoEnvLeavesTheWorkspace(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=readonly")
	t.Setenv("GOWORK", "/somewhere/go.work")
	t.Setenv("CGO_ENABLED", "1")
	env := goEnv()
	var goflags, gowork []string
	for _, e := range env {
		switch {
		case len(e) > 8 && e[:8] == "GOFLAGS=":
			goflags = append(goflags, e)
		case len(e) > 7 && e[:7] == "GOWORK=":
			gowork = append(gowork, e)
		}
	}
	if len(goflags) != 1 || goflags[0] != "GOFLAGS=-mod=mod" || len(gowork) != 1 || gowork[0] != "GOWORK=off" {
		t.Fatalf("GOFLAGS %v GOWORK %v", goflags, gowork)
	}
	if n := count(env, "CGO_ENABLED=0"); n != 1 {
		t.Fatalf("CGO_ENABLED=0 appears %d times in %v; want once (static binaries)", n, env)
	}
}

func count(list []string, s string) int {
	n := 0
	for _, e := range list {
		if e == s {
			n++
		}
	}
	return n
}
