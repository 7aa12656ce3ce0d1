package fakeaws

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// rootPathOracle is the EFS pattern ^(\/|(\/(?!\.)+[^$#<>;`|&?{}^*/\n]+){1,4})$ rewritten without the lookahead
// Go lacks: a component's first character is also not a dot.
var rootPathOracle = regexp.MustCompile("^(/|(/[^.$#<>;`|&?{}^*/\\n][^$#<>;`|&?{}^*/\\n]*){1,4})$")

func TestValidateRootPath(t *testing.T) {
	rows := []struct {
		path    string
		wantErr string
	}{
		{"/", ""},
		{"/a", ""},
		{"/dynamic/pvc-1", ""},
		{"/a/b/c/d", ""},
		{"/a.b/c..d", ""},
		{"/" + strings.Repeat("x", 99), ""},
		{"", "length"},
		{"/" + strings.Repeat("x", 100), "length"},
		{"a/b", "must start with /"},
		{"/a/b/c/d/e", "more than 4"},
		{"/a//b", "empty directory"},
		{"/a/", "empty directory"},
		{"/..", "starts with '.'"},
		{"/a/../b", "starts with '.'"},
		{"/.hidden", "starts with '.'"},
		{"/a$b", "contains"},
		{"/a b;rm", "contains"},
		{"/a\nb", "contains"},
	}
	for _, row := range rows {
		e := validateRootPath(row.path)
		switch {
		case row.wantErr == "" && e != nil:
			t.Errorf("validateRootPath(%q) = %v, want nil", row.path, e)
		case row.wantErr != "" && (e == nil || !strings.Contains(e.Message, row.wantErr) || !strings.Contains(e.Message, "RootDirectory.Path")):
			t.Errorf("validateRootPath(%q) = %v, want an error about %q naming RootDirectory.Path", row.path, e, row.wantErr)
		}
		if oracle := rootPathOracle.MatchString(row.path) && len(row.path) <= 100; oracle != (e == nil) {
			t.Errorf("validateRootPath(%q) accepts=%v, the EFS pattern says %v", row.path, e == nil, oracle)
		}
	}
}

// FuzzValidateRootPath checks the hand-written validator against the EFS pattern on arbitrary paths.
func FuzzValidateRootPath(f *testing.F) {
	for _, p := range []string{"/", "/a/b", "/a/../b", "/.x", "/a/b/c/d/e", "a", "/a$", "//", "/é/ü"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		e := validateRootPath(p)
		oracle := rootPathOracle.MatchString(p) && len(p) <= 100
		if oracle != (e == nil) {
			t.Fatalf("validateRootPath(%q) = %v; the EFS pattern says valid=%v", p, e, oracle)
		}
	})
}

func TestValidateTags(t *testing.T) {
	many := make([]Tag, 51)
	for i := range many {
		many[i] = Tag{Key: strings.Repeat("k", i+1)}
	}
	rows := []struct {
		name    string
		tags    []Tag
		wantErr string
	}{
		{"ok", []Tag{{"Name", "x"}, {"efs.csi.aws.com/cluster", "true"}}, ""},
		{"empty value", []Tag{{"k", ""}}, ""},
		{"too many", many, "at most 50"},
		{"empty key", []Tag{{"", "v"}}, "1 to 128"},
		{"reserved", []Tag{{"AWS:x", "v"}}, "reserved"},
		{"long value", []Tag{{"k", strings.Repeat("v", 257)}}, "256"},
		{"duplicate", []Tag{{"k", "1"}, {"k", "2"}}, "more than once"},
	}
	for _, row := range rows {
		e := validateTags("Tags", row.tags)
		if (row.wantErr == "") != (e == nil) || e != nil && !strings.Contains(e.Message, row.wantErr) {
			t.Errorf("%s: validateTags = %v, want %q", row.name, e, row.wantErr)
		}
	}
}

// FuzzCreateAccessPointRequest feeds arbitrary JSON bodies to the CreateAccessPoint request parsing: no panic,
// errors are BadRequest naming a field, and what is accepted satisfies the EFS constraints.
func FuzzCreateAccessPointRequest(f *testing.F) {
	f.Add(`{"ClientToken":"t","FileSystemId":"fs-0123456789abcdef0","PosixUser":{"Uid":1,"Gid":2,"SecondaryGids":[3]},` +
		`"RootDirectory":{"Path":"/a/b","CreationInfo":{"OwnerUid":1,"OwnerGid":2,"Permissions":"0755"}},"Tags":[{"Key":"k","Value":"v"}]}`)
	f.Add(`{"ClientToken":"","FileSystemId":"arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-01234567"}`)
	f.Add(`{"ClientToken":"t","FileSystemId":"fs-01234567","PosixUser":{"Uid":-1}}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/2015-02-01/access-points", strings.NewReader(body))
		var req createAccessPointRequest
		if e := decodeJSONBody(r, &req); e != nil {
			if e.Code != "BadRequest" {
				t.Fatalf("decode error code %s", e.Code)
			}
			return
		}
		ap, e := accessPointFromRequest(req)
		if e != nil {
			if e.Code != "BadRequest" || e.Message == "" {
				t.Fatalf("error %v", e)
			}
			return
		}
		if ap.ClientToken == "" || len(ap.ClientToken) > 64 || !fileSystemIDPattern.MatchString(ap.FileSystemId) {
			t.Fatalf("accepted %+v", ap)
		}
		if ap.RootDirectory.Path != "" && validateRootPath(ap.RootDirectory.Path) != nil {
			t.Fatalf("accepted root path %q", ap.RootDirectory.Path)
		}
		if p := ap.PosixUser; p != nil && (p.Uid < 0 || p.Gid < 0 || p.Uid > maxPOSIXID || p.Gid > maxPOSIXID) {
			t.Fatalf("accepted POSIX user %+v", p)
		}
	})
}
