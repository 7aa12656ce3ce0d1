package containerfile

import (
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
)

func TestParse(t *testing.T) {
	f, err := Parse(`# comment
ARG BASE=registry.example.com/rhel9:latest
FROM golang AS builder
RUN go build \
    # a comment inside a continuation
    ./...
RUN dnf install -y --setopt=x python3 \
        stunnel && dnf clean all
FROM ${BASE}
COPY --from=builder --chmod=0755 /out/x /usr/bin/x
ENTRYPOINT ["/usr/bin/x", "--flag=1"]
LABEL a="one two" \
      b=three c='single "quoted"' d="escaped \"quote\""
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Graph(), " "); got != "builder<-golang #1<-registry.example.com/rhel9:latest" {
		t.Fatalf("graph = %s", got)
	}
	if r := Commands[*instructions.RunCommand](&f.Stages[0]); len(r) != 2 || RunLine(r[0]) != "go build ./..." {
		t.Errorf("RUN = %+v", r)
	}
	c := Commands[*instructions.CopyCommand](f.Final())[0]
	if c.Chmod != "0755" || c.From != "builder" || c.DestPath != "/usr/bin/x" {
		t.Errorf("COPY = %+v", c)
	}
	ep := Commands[*instructions.EntrypointCommand](f.Final())[0]
	if ep.PrependShell || strings.Join(ep.CmdLine, " ") != "/usr/bin/x --flag=1" {
		t.Errorf("ENTRYPOINT = %+v", ep)
	}
	labels := Labels(f.Final())
	if labels["a"] != "one two" || labels["b"] != "three" || labels["c"] != `single "quoted"` || labels["d"] != `escaped "quote"` {
		t.Errorf("labels = %q", labels)
	}
	if got := strings.Join(f.DNFPackages(), " "); got != "python3 stunnel" {
		t.Errorf("dnf packages = %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	rows := []struct{ name, content, want string }{
		{"empty", "# nothing\n", "file with no instructions"},
		{"run before from", "RUN true\nFROM x\n", "no build stage in current context"},
		{"bare from", "FROM\n", "FROM requires either one or three arguments"},
	}
	for _, row := range rows {
		if _, err := Parse(row.content); err == nil || !strings.Contains(err.Error(), row.want) {
			t.Errorf("%s: Parse = %v, want %q", row.name, err, row.want)
		}
	}
}
