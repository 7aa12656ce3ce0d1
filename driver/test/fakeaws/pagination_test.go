package fakeaws

import (
	"strings"
	"testing"
)

func TestDecodePageToken(t *testing.T) {
	rows := []struct {
		name, token, scope string
		want               uint64
		wantErr            string
	}{
		{"empty starts the listing", "", "fs-1", 0, ""},
		{"round trip", encodePageToken("fs-1", 42), "fs-1", 42, ""},
		{"other scope", encodePageToken("fs-2", 42), "fs-1", 0, "different listing"},
		{"not base64", "!!!", "fs-1", 0, "not a token issued"},
		{"wrong version", "djJ8ZnMtMXw0Mg", "fs-1", 0, "not a token issued"}, // v2|fs-1|42
		{"seq zero", encodePageToken("fs-1", 0), "fs-1", 0, "not a token issued"},
		{"too long", strings.Repeat("A", 129), "fs-1", 0, "longer than 128"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			got, e := decodePageToken("NextToken", row.token, row.scope)
			if row.wantErr != "" {
				if e == nil || e.Code != "BadRequest" || !strings.Contains(e.Message, row.wantErr) ||
					!strings.Contains(e.Message, "NextToken") {
					t.Fatalf("err = %v, want BadRequest naming NextToken and %q", e, row.wantErr)
				}
				return
			}
			if e != nil || got != row.want {
				t.Errorf("decode = %d, %v; want %d", got, e, row.want)
			}
		})
	}
}

func TestParsePageSize(t *testing.T) {
	rows := []struct {
		raw     string
		want    int
		wantErr bool
	}{
		{"", 100, false}, {"1", 1, false}, {"250", 250, false}, {"5000", 1000, false},
		{"0", 0, true}, {"-3", 0, true}, {"ten", 0, true}, {"1.5", 0, true},
	}
	for _, row := range rows {
		got, e := parsePageSize("MaxResults", row.raw, 100, 1000)
		if (e != nil) != row.wantErr || got != row.want {
			t.Errorf("parsePageSize(%q) = %d, %v; want %d, error %v", row.raw, got, e, row.want, row.wantErr)
		}
	}
}

// FuzzPageToken feeds arbitrary tokens and page sizes to the parsers of untrusted query parameters: they never
// panic, errors are BadRequest, and every accepted token re-encodes to itself.
func FuzzPageToken(f *testing.F) {
	f.Add(encodePageToken("fs-0123456789abcdef0", 7), "fs-0123456789abcdef0", "100")
	f.Add("djF8KnwxMg", "*", "0")
	f.Add("", "", "-1")
	f.Add("%%%", "fs-1", "99999999999999999999")
	f.Fuzz(func(t *testing.T, token, scope, size string) {
		seq, e := decodePageToken("NextToken", token, scope)
		if e != nil && e.Code != "BadRequest" {
			t.Fatalf("error code %s", e.Code)
		}
		if e == nil && token != "" && encodePageToken(scope, seq) != token {
			t.Fatalf("token %q decoded to %d but re-encodes to %q", token, seq, encodePageToken(scope, seq))
		}
		n, e := parsePageSize("MaxResults", size, 100, 1000)
		if e == nil && (n < 1 || n > 1000) {
			t.Fatalf("page size %q parsed to %d", size, n)
		}
	})
}
