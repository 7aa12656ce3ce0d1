package containerfile

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f, err := Parse(`# comment
ARG BASE=registry.example.com/rhel9:latest
FROM golang AS builder
RUN go build \
    # a comment inside a continuation
    ./...
FROM ${BASE}
COPY --from=builder --chmod=0755 /out/x /usr/bin/x
ENTRYPOINT ["/usr/bin/x", "--flag=1"]
LABEL a="one two" \
      b="three"
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Stages) != 2 || f.Stages[0].Name != "builder" || f.Final().From != "registry.example.com/rhel9:latest" {
		t.Fatalf("stages = %+v", f.Stages)
	}
	if r := f.Stages[0].Find("RUN"); len(r) != 1 || r[0].Args != "go build ./..." || r[0].Line != 4 {
		t.Errorf("RUN = %+v", r)
	}
	c := f.Final().Find("COPY")[0]
	if c.Flag("chmod") != "0755" || c.Flag("from") != "builder" || c.Args != "/out/x /usr/bin/x" {
		t.Errorf("COPY = %+v", c)
	}
	ep, err := f.Final().Find("ENTRYPOINT")[0].JSONArgs()
	if err != nil || strings.Join(ep, " ") != "/usr/bin/x --flag=1" {
		t.Errorf("ENTRYPOINT = %v, %v", ep, err)
	}
	labels, err := f.Final().Labels()
	if err != nil || labels["a"] != "one two" || labels["b"] != "three" {
		t.Errorf("labels = %v, %v", labels, err)
	}
}

func TestParseErrors(t *testing.T) {
	rows := []struct{ name, content, want string }{
		{"empty", "# nothing\n", "no FROM instruction"},
		{"run before from", "RUN true\nFROM x\n", "line 1: RUN before the first FROM"},
		{"bare from", "FROM\n", "line 1: FROM without an image"},
	}
	for _, row := range rows {
		if _, err := Parse(row.content); err == nil || !strings.Contains(err.Error(), row.want) {
			t.Errorf("%s: Parse = %v, want %q", row.name, err, row.want)
		}
	}
	f, _ := Parse("FROM x\nENTRYPOINT /bin/sh -c x\nLABEL a=b\n")
	if _, err := f.Final().Find("ENTRYPOINT")[0].JSONArgs(); err == nil || !strings.Contains(err.Error(), "want the exec form") {
		t.Errorf("shell-form ENTRYPOINT: %v", err)
	}
	if _, err := f.Final().Labels(); err == nil || !strings.Contains(err.Error(), `want key="value" pairs`) {
		t.Errorf("unquoted label: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("FROM x AS y\nRUN a \\\n b\nLABEL k=\"v\"\n")
	f.Add("ARG A=1\nFROM ${A}\nCOPY --chmod=0755 a b\n")
	f.Fuzz(func(t *testing.T, content string) {
		file, err := Parse(content)
		if err != nil {
			return
		}
		for _, s := range file.Stages {
			s.Labels()
			for _, ins := range s.Instructions {
				ins.JSONArgs()
			}
		}
	})
}
