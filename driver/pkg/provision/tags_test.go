package provision

import (
	"maps"
	"strings"
	"testing"
)

var tagCases = []struct {
	in      string
	want    map[string]string
	wantErr string
}{
	{"", map[string]string{}, ""},
	{"name:efs-tag-test date:Jan24", map[string]string{"name": "efs-tag-test", "date": "Jan24"}, ""},
	{`a\:b:c\ d  e:`, map[string]string{"a:b": "c d", "e": ""}, ""},
	{`path:C\\x`, map[string]string{"path": `C\x`}, ""},
	{"novalue", nil, `"novalue": want key:value`},
	{":v", nil, "want a key of 1 to 128"},
	{"a:b:c", nil, "more than one unescaped ':'"},
	{strings.Repeat("k", 129) + ":v", nil, "want a key of 1 to 128"},
}

func TestParseTags(t *testing.T) {
	for _, tt := range tagCases {
		got, err := ParseTags(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--tags") {
				t.Errorf("ParseTags(%q) = %v, %v; want error naming --tags and %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("ParseTags(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseTags(f *testing.F) {
	for _, tt := range tagCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, err := ParseTags(s)
		if err != nil {
			return
		}
		again, err := ParseTags(FormatTags(tags))
		if err != nil || !maps.Equal(again, tags) {
			t.Fatalf("round trip of %q via %q: %v, %v", s, FormatTags(tags), again, err)
		}
	})
}
