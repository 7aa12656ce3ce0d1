package containerfile

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// File is a parsed Containerfile.
type File struct {
	// Args are the defaults of the ARGs declared before the first FROM ("" for an ARG without one).
	Args map[string]string
	// Stages are the build stages in order; each BaseName has the ARG defaults expanded.
	Stages []instructions.Stage
}

// Parse reads a Containerfile.
func Parse(content string) (File, error) { return ParseWithArgs(content, nil) }

// ParseWithArgs reads a Containerfile built with --build-arg values args: they replace the defaults of the ARGs
// declared before the first FROM, as a build's do (a Konflux run's build-args, say).
func ParseWithArgs(content string, args map[string]string) (File, error) {
	ast, err := parser.Parse(bytes.NewBufferString(content))
	if err != nil {
		return File{}, err
	}
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		return File{}, err
	}
	if len(stages) == 0 {
		return File{}, fmt.Errorf("no FROM instruction")
	}
	f := File{Args: map[string]string{}}
	var env []string
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			v := kv.ValueString()
			if given, ok := args[kv.Key]; ok {
				v = given
			}
			f.Args[kv.Key] = v
			env = append(env, kv.Key+"="+v)
		}
	}
	// Expand words as a build does with the default ARGs: quotes are removed and ${NAME} is replaced (RUN
	// command lines are left to the shell; their --mount flags are read).
	lex := shell.NewLex(ast.EscapeToken)
	expand := func(word string) (string, error) {
		w, _, err := lex.ProcessWord(word, shell.EnvsFromSlice(env))
		return w, err
	}
	for i := range stages {
		base, err := expand(stages[i].BaseName)
		if err != nil {
			return File{}, fmt.Errorf("FROM %s: %w", stages[i].BaseName, err)
		}
		stages[i].BaseName = base
		for _, c := range stages[i].Commands {
			if e, ok := c.(instructions.SupportsSingleWordExpansion); ok {
				if err := e.Expand(expand); err != nil {
					return File{}, fmt.Errorf("%s: %w", c.Name(), err)
				}
			}
		}
	}
	f.Stages = stages
	return f, nil
}

// ParseFile reads and parses the Containerfile at path; errors name the file.
func ParseFile(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	f, err := Parse(string(data))
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Final is the last stage, the image that is built.
func (f File) Final() *instructions.Stage { return &f.Stages[len(f.Stages)-1] }

// Stage returns the stage named name (FROM ... AS name).
func (f File) Stage(name string) (*instructions.Stage, bool) {
	for i := range f.Stages {
		if f.Stages[i].Name == name {
			return &f.Stages[i], true
		}
	}
	return nil, false
}

// Graph describes each stage as "name<-base", where base is another stage's name or an image reference: the
// shape both build paths must share.
func (f File) Graph() []string {
	var out []string
	for i, s := range f.Stages {
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		out = append(out, name+"<-"+s.BaseName)
	}
	return out
}

// Commands returns the commands of s of type T (e.g. *instructions.RunCommand).
func Commands[T instructions.Command](s *instructions.Stage) []T {
	var out []T
	for _, c := range s.Commands {
		if t, ok := c.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// Labels returns the LABELs of s; later ones override earlier ones.
func Labels(s *instructions.Stage) map[string]string {
	out := map[string]string{}
	for _, l := range Commands[*instructions.LabelCommand](s) {
		for _, kv := range l.Labels {
			out[kv.Key] = kv.Value
		}
	}
	return out
}

// RunLine is the command line of a RUN, its words joined by single spaces.
func RunLine(r *instructions.RunCommand) string {
	return strings.Join(strings.Fields(strings.Join(r.CmdLine, " ")), " ")
}

// DNFPackages returns the packages of every `dnf install` of every stage, sorted.
func (f File) DNFPackages() []string {
	var pkgs []string
	for i := range f.Stages {
		for _, r := range Commands[*instructions.RunCommand](&f.Stages[i]) {
			for _, cmd := range strings.Split(RunLine(r), "&&") {
				words := strings.Fields(cmd)
				for j := 0; j+1 < len(words); j++ {
					if words[j] == "dnf" && words[j+1] == "install" {
						for _, a := range words[j+2:] {
							if !strings.HasPrefix(a, "-") {
								pkgs = append(pkgs, a)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(pkgs)
	return pkgs
}
