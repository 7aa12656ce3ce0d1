package wheels

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Requirement is one pinned line of a requirements file.
type Requirement struct {
	// Name is the project name as written; Normalized() gives the PEP 503 form.
	Name    string
	Version string
	// Hashes are lower-case hex sha256 digests, sorted, without the "sha256:" prefix.
	Hashes []string
	// Line is the 1-based line where the requirement starts; FirstLine..LastLine span its continuation lines.
	Line     int
	LastLine int
	// Comment is a trailing comment on the requirement, kept by Lock.
	Comment string
}

// Normalized is the PEP 503 normalized project name: lower case, runs of "-", "_" and "." replaced by "-".
func (r Requirement) Normalized() string { return Normalize(r.Name) }

// String is "name==version".
func (r Requirement) String() string { return r.Name + "==" + r.Version }

var (
	separators  = regexp.MustCompile(`[-_.]+`)
	projectName = regexp.MustCompile(`^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$`)
	// pinnedVersion accepts the public PEP 440 versions that can be pinned exactly (no wildcards, no local part).
	pinnedVersion = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$`)
	sha256Hex     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Normalize applies PEP 503 name normalization.
func Normalize(name string) string {
	return strings.ToLower(separators.ReplaceAllString(name, "-"))
}

// ParseRequirements reads a requirements file in which every active line is `name==version` followed by one or
// more `--hash=sha256:<64 hex>` options (continuation lines allowed). Comments and blank lines are skipped. Any
// other form — a range, an unpinned name, an option, a URL, an environment marker, a line without a hash — is an
// error naming the line, because the image must install exactly what was reviewed.
func ParseRequirements(file, content string) ([]Requirement, error) {
	var out []Requirement
	seen := map[string]int{}
	lines := strings.Split(content, "\n")
	for i := 0; i < len(lines); i++ {
		first := i
		logical := lines[i]
		for strings.HasSuffix(strings.TrimRight(stripComment(logical), " \t\r"), `\`) && i+1 < len(lines) {
			logical = strings.TrimSuffix(strings.TrimRight(stripComment(logical), " \t\r"), `\`) + " " + lines[i+1]
			i++
		}
		comment := ""
		if idx := commentIndex(logical); idx >= 0 {
			comment = strings.TrimSpace(logical[idx:])
		}
		text := strings.TrimSpace(stripComment(logical))
		if text == "" {
			continue
		}
		req, err := parseLine(text)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", file, first+1, err)
		}
		req.Line, req.LastLine, req.Comment = first+1, i+1, comment
		if prev, dup := seen[req.Normalized()]; dup {
			return nil, fmt.Errorf("%s line %d: %s is already pinned on line %d", file, first+1, req.Name, prev)
		}
		seen[req.Normalized()] = req.Line
		out = append(out, req)
	}
	return out, nil
}

// parseLine parses one logical line without its comment.
func parseLine(text string) (Requirement, error) {
	fields := strings.Fields(text)
	spec := fields[0]
	if strings.HasPrefix(spec, "-") {
		return Requirement{}, fmt.Errorf("%q: options are not accepted; want name==version --hash=sha256:<64 hex digits>", spec)
	}
	name, version, ok := strings.Cut(spec, "==")
	if !ok || strings.ContainsAny(version, "=<>!~*;,[@") || strings.ContainsAny(name, "<>!~;[@:/") {
		return Requirement{}, fmt.Errorf("%q is not pinned: want name==version --hash=sha256:<64 hex digits>, e.g. botocore==1.34.140", spec)
	}
	if !projectName.MatchString(name) {
		return Requirement{}, fmt.Errorf("project name %q: want letters, digits, '.', '_' and '-', starting and ending with a letter or digit", name)
	}
	if !pinnedVersion.MatchString(version) {
		return Requirement{}, fmt.Errorf("%s version %q: want an exact public version such as 1.34.140", name, version)
	}
	req := Requirement{Name: name, Version: version}
	for j := 1; j < len(fields); j++ {
		opt := fields[j]
		value, found := strings.CutPrefix(opt, "--hash=")
		if !found && opt == "--hash" && j+1 < len(fields) {
			j++
			value, found = fields[j], true
		}
		if !found {
			return Requirement{}, fmt.Errorf("%s: %q: only --hash=sha256:<64 hex digits> may follow the pin", spec, opt)
		}
		algo, digest, _ := strings.Cut(value, ":")
		if algo != "sha256" || !sha256Hex.MatchString(digest) {
			return Requirement{}, fmt.Errorf("%s: hash %q: want sha256:<64 lower-case hex digits>", spec, value)
		}
		req.Hashes = append(req.Hashes, digest)
	}
	if len(req.Hashes) == 0 {
		return Requirement{}, fmt.Errorf("%s has no --hash=sha256:…: every requirement must be hash-pinned (go tool mage wheels:lock computes the hashes)", spec)
	}
	sort.Strings(req.Hashes)
	req.Hashes = slices.Compact(req.Hashes)
	return req, nil
}

// commentIndex is where a comment starts: a '#' at the start of the line or after whitespace (pip's rule).
func commentIndex(line string) int {
	for i, r := range line {
		if r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return i
		}
	}
	return -1
}

func stripComment(line string) string {
	if i := commentIndex(line); i >= 0 {
		return line[:i]
	}
	return line
}

// Format renders a requirement the way Lock writes it: a trailing comment moves to a line of its own above the
// pin (a comment must not hide a line continuation), then the pin and one hash per continuation line.
func (r Requirement) Format() string {
	var b strings.Builder
	if r.Comment != "" {
		b.WriteString(r.Comment + "\n")
	}
	b.WriteString(r.String())
	for _, h := range r.Hashes {
		b.WriteString(" \\\n    --hash=sha256:" + h)
	}
	return b.String()
}
