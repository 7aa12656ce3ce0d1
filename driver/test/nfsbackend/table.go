package nfsbackend

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Entry is one NFS mount as the kernel would list it in /proc/mounts.
type Entry struct {
	Source, Target, Options string
}

// Line formats the entry as a /proc/mounts line of type nfs4, with the kernel's octal escapes.
func (e Entry) Line() string {
	return fmt.Sprintf("%s %s nfs4 %s 0 0\n", escapeField(e.Source), escapeField(e.Target), e.Options)
}

// escapeField escapes space, tab, newline and backslash as the kernel does in /proc/mounts and mountinfo.
func escapeField(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\':
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeField undoes escapeField (any \ooo octal escape).
func unescapeField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ParseTable reads the entries of a mount table in /proc/mounts format (lines of any type are kept as entries of
// type nfs4 only when their type starts with nfs).
func ParseTable(text string) []Entry {
	var out []Entry
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[2], "nfs") {
			continue
		}
		out = append(out, Entry{Source: unescapeField(f[0]), Target: unescapeField(f[1]), Options: f[3]})
	}
	return out
}

// MountPoints returns the mount points listed in /proc/<pid>/mountinfo text (field 5, unescaped).
func MountPoints(mountinfo string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) > 4 {
			out[unescapeField(f[4])] = true
		}
	}
	return out
}

// Live keeps the entries whose target is still a mount point, once each (the last entry for a target wins, as a
// mount made later is on top), in their order.
func Live(entries []Entry, mounted map[string]bool) []Entry {
	var out []Entry
	for i, e := range entries {
		if !mounted[e.Target] {
			continue
		}
		if slices.ContainsFunc(entries[i+1:], func(later Entry) bool { return later.Target == e.Target }) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Format returns the table text of entries.
func Format(entries []Entry) string {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Line())
	}
	return b.String()
}
