package fakeaws

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestWildcardMatch(t *testing.T) {
	rows := []struct {
		pattern, s string
		want       bool
	}{
		{"us-east-1a", "us-east-1a", true}, {"us-east-1a", "us-east-1b", false},
		{"*", "", true}, {"*az2", "use1-az2", true}, {"use1-*", "use1-az2", true}, {"*-az?", "use1-az3", true},
		{"?", "", false}, {"a*b*c", "aXbYc", true}, {"a*b*c", "aXbY", false}, {"**a", "a", true},
	}
	for _, row := range rows {
		if got := wildcardMatch(row.pattern, row.s); got != row.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", row.pattern, row.s, got, row.want)
		}
	}
}

// FuzzEC2Query feeds arbitrary filter and zone parameters to the EC2 request parsing: no panic, errors are
// InvalidParameterValue, and wildcard matching agrees with the equivalent regular expression.
func FuzzEC2Query(f *testing.F) {
	f.Add("zone-id", "*az?", "us-east-1a", "use1-az1")
	f.Add("color", "x", "", "")
	f.Add("", "", "us-east-1z", "")
	f.Fuzz(func(t *testing.T, name, value, zoneName, zoneID string) {
		form := "Action=DescribeAvailabilityZones&Filter.1.Name=" + escape(name) + "&Filter.1.Value.1=" + escape(value) +
			"&ZoneName.1=" + escape(zoneName) + "&ZoneId.1=" + escape(zoneID)
		r := httptest.NewRequest("POST", "/", strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if err := r.ParseForm(); err != nil {
			return
		}
		s := New(Options{})
		if _, e := s.describeAvailabilityZones(r); e != nil && e.Code != "InvalidParameterValue" {
			t.Fatalf("error code %s", e.Code)
		}
		if !isASCII(value) || !isASCII(zoneName) {
			return // EC2 matches bytes; the regexp oracle matches runes
		}
		re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(value)) + "$"
		if want := regexp.MustCompile("(?s)" + re).MatchString(zoneName); wildcardMatch(value, zoneName) != want {
			t.Fatalf("wildcardMatch(%q, %q) = %v, regexp says %v", value, zoneName, !want, want)
		}
	})
}

func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '*' || c == '?' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
