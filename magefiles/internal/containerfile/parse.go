package containerfile

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Instruction is one Containerfile instruction with its continuation lines joined.
type Instruction struct {
	// Cmd is the upper-case keyword (FROM, RUN, COPY, ...).
	Cmd string
	// Flags are the leading --name=value options (COPY --chmod=0755, RUN --mount=...).
	Flags []string
	// Args is the rest of the line.
	Args string
	// Line is the 1-based line the instruction starts on.
	Line int
}

// Stage is a FROM and what follows it.
type Stage struct {
	From         string
	Name         string
	Instructions []Instruction
}

// File is a parsed Containerfile.
type File struct {
	// Args are the ARG defaults declared before the first FROM.
	Args   map[string]string
	Stages []Stage
}

// Parse reads a Containerfile. Comments and blank lines are skipped and lines ending in a backslash continue.
func Parse(content string) (File, error) {
	f := File{Args: map[string]string{}}
	lines := strings.Split(content, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		text := strings.TrimSpace(lines[i])
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				continue
			}
			text = strings.TrimSpace(strings.TrimSuffix(text, `\`)) + " " + next
		}
		ins := parseInstruction(text, start+1)
		switch {
		case ins.Cmd == "FROM":
			fields := strings.Fields(ins.Args)
			if len(fields) == 0 {
				return File{}, fmt.Errorf("line %d: FROM without an image: want FROM <image> [AS <name>]", ins.Line)
			}
			st := Stage{From: f.expand(fields[0])}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				st.Name = fields[2]
			}
			f.Stages = append(f.Stages, st)
		case len(f.Stages) == 0 && ins.Cmd == "ARG":
			k, v, _ := strings.Cut(ins.Args, "=")
			f.Args[k] = v
		case len(f.Stages) == 0:
			return File{}, fmt.Errorf("line %d: %s before the first FROM", ins.Line, ins.Cmd)
		default:
			last := &f.Stages[len(f.Stages)-1]
			last.Instructions = append(last.Instructions, ins)
		}
	}
	if len(f.Stages) == 0 {
		return File{}, fmt.Errorf("no FROM instruction")
	}
	return f, nil
}

func parseInstruction(text string, line int) Instruction {
	cmd, rest, _ := strings.Cut(text, " ")
	ins := Instruction{Cmd: strings.ToUpper(cmd), Line: line}
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "--") {
		flag, after, _ := strings.Cut(rest, " ")
		ins.Flags = append(ins.Flags, flag)
		rest = strings.TrimSpace(after)
	}
	ins.Args = rest
	return ins
}

// expand replaces ${NAME} with the ARG default declared before the first FROM.
func (f File) expand(s string) string {
	for k, v := range f.Args {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
	}
	return s
}

// Final is the last stage, the image that is built.
func (f File) Final() Stage { return f.Stages[len(f.Stages)-1] }

// Find returns the instructions of a stage with the given keyword.
func (s Stage) Find(cmd string) []Instruction {
	var out []Instruction
	for _, ins := range s.Instructions {
		if ins.Cmd == cmd {
			out = append(out, ins)
		}
	}
	return out
}

// Flag returns the value of --name=value, or "".
func (i Instruction) Flag(name string) string {
	for _, f := range i.Flags {
		if v, ok := strings.CutPrefix(f, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// JSONArgs reads the exec form ["a", "b"] of ENTRYPOINT and CMD.
func (i Instruction) JSONArgs() ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(i.Args), &out); err != nil {
		return nil, fmt.Errorf("line %d: %s %s: want the exec form [\"program\", \"arg\"]", i.Line, i.Cmd, i.Args)
	}
	return out, nil
}

// Labels reads the key="value" pairs of the stage's LABEL instructions.
func (s Stage) Labels() (map[string]string, error) {
	out := map[string]string{}
	for _, ins := range s.Find("LABEL") {
		rest := ins.Args
		for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
			k, after, ok := strings.Cut(rest, "=")
			if !ok || !strings.HasPrefix(after, `"`) {
				return nil, fmt.Errorf("line %d: LABEL %s: want key=\"value\" pairs", ins.Line, rest)
			}
			end := strings.Index(after[1:], `"`)
			if end < 0 {
				return nil, fmt.Errorf("line %d: LABEL %s: unterminated value", ins.Line, k)
			}
			out[k] = after[1 : end+1]
			rest = after[end+2:]
		}
	}
	return out, nil
}
