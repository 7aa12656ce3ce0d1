package provision

import (
	"fmt"
	"sort"
	"strings"
)

// ParseTags parses the --tags value: space-separated key:value pairs, where a backslash escapes the next
// character (so "\:" and "\ " put a colon or space into a key or value). Keys are 1-128 characters, values 0-256.
// As upstream, an entry without ':' is a key with an empty value, and a malformed entry (more than one unescaped
// ':', an empty or overlong key, an overlong value) is skipped: it comes back as a warning naming it, never as an
// error, so that a bad tag cannot crash-loop the controller.
func ParseTags(s string) (map[string]string, []string) {
	tags := map[string]string{}
	var warnings []string
	for _, pair := range splitUnescaped(s, ' ') {
		if pair == "" {
			continue
		}
		kv := splitUnescaped(pair, ':')
		if len(kv) > 2 {
			warnings = append(warnings, fmt.Sprintf("--tags entry %q skipped: more than one unescaped ':'; want key:value (escape ':' as \\:)", pair))
			continue
		}
		key, value := unescape(kv[0]), ""
		if len(kv) == 2 {
			value = unescape(kv[1])
		}
		if key == "" || len(key) > 128 || len(value) > 256 {
			warnings = append(warnings, fmt.Sprintf("--tags entry %q skipped: want a key of 1 to 128 characters and a value of at most 256", pair))
			continue
		}
		tags[key] = value
	}
	return tags, warnings
}

// FormatTags is the inverse of ParseTags, with keys sorted.
func FormatTags(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, escape(k)+":"+escape(tags[k]))
	}
	return strings.Join(parts, " ")
}

// splitUnescaped splits s at every sep not preceded by a backslash, keeping escapes in the parts.
func splitUnescaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func escape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, ":", `\:`, " ", `\ `)
	return r.Replace(s)
}
