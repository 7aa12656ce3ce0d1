package provision

import (
	"maps"
	"strings"
	"testing"
)

// tagCases state upstream's parseTagsFromStr: an entry without ':' is a key with an empty value; a malformed one
// is skipped (with a warning here; upstream logs an error) and the others are kept.
var tagCases = []struct {
	in      string
	want    map[string]string
	warning string
}{
	{"", map[string]string{}, ""},
	{"name:efs-tag-test date:Jan24", map[string]string{"name": "efs-tag-test", "date": "Jan24"}, ""},
	{`a\:b:c\ d  e:`, map[string]string{"a:b": "c d", "e": ""}, ""},
	{`path:C\\x`, map[string]string{"path": `C\x`}, ""},
	{"novalue", map[string]string{"novalue": ""}, ""},
	{":v ok:1", map[string]string{"ok": "1"}, `--tags entry ":v" skipped: want a key of 1 to 128`},
	{"a:b:c ok:1", map[string]string{"ok": "1"}, `--tags entry "a:b:c" skipped: more than one unescaped ':'`},
	{strings.Repeat("k", 129) + ":v", map[string]string{}, "want a key of 1 to 128"},
}

func TestParseTags(t *testing.T) {
	for _, tt := range tagCases {
		got, warnings := ParseTags(tt.in)
		if !maps.Equal(got, tt.want) {
			t.Errorf("ParseTags(%q) = %v, want %v", tt.in, got, tt.want)
		}
		switch {
		case tt.warning == "" && len(warnings) != 0:
			t.Errorf("ParseTags(%q) warnings %q, want none", tt.in, warnings)
		case tt.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warning)):
			t.Errorf("ParseTags(%q) warnings %q, want one containing %q", tt.in, warnings, tt.warning)
		}
	}
}

func FuzzParseTags(f *testing.F) {
	for _, tt := range tagCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, _ := ParseTags(s)
		again, warnings := ParseTags(FormatTags(tags))
		if len(warnings) != 0 || !maps.Equal(again, tags) {
			t.Fatalf("round trip of %q via %q: %v, %v", s, FormatTags(tags), again, warnings)
		}
	})
}
