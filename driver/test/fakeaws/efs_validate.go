package fakeaws

import (
	"regexp"
	"strings"
)

// Patterns from the EFS API reference.
var (
	fileSystemIDPattern   = regexp.MustCompile(`^fs-[0-9a-f]{8,40}$`)
	fileSystemARNPattern  = regexp.MustCompile(`^arn:aws[-a-z]*:elasticfilesystem:[0-9a-z-:]+:file-system/(fs-[0-9a-f]{8,40})$`)
	accessPointIDPattern  = regexp.MustCompile(`^fsap-[0-9a-f]{8,40}$`)
	accessPointARNPattern = regexp.MustCompile(
		`^arn:aws[-a-z]*:elasticfilesystem:[0-9a-z-:]+:access-point/(fsap-[0-9a-f]{8,40})$`)
	mountTargetIDPattern = regexp.MustCompile(`^fsmt-[0-9a-f]{8,40}$`)
	subnetIDPattern      = regexp.MustCompile(`^subnet-[0-9a-f]{8,40}$`)
	permissionsPattern   = regexp.MustCompile(`^[0-7]{3,4}$`)
	ipv4Pattern          = regexp.MustCompile(`^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$`)
)

const maxPOSIXID = 4294967295

// fileSystemID returns the file system ID in value (an ID or an ARN).
func fileSystemID(field, value string) (string, *apiError) {
	if fileSystemIDPattern.MatchString(value) {
		return value, nil
	}
	if m := fileSystemARNPattern.FindStringSubmatch(value); m != nil {
		return m[1], nil
	}
	return "", errBadRequest("%s %q is not valid: want a file system ID (fs-[0-9a-f]{8,40}) or its ARN",
		field, truncate(value, 140))
}

// accessPointID returns the access point ID in value (an ID or an ARN).
func accessPointID(field, value string) (string, *apiError) {
	if accessPointIDPattern.MatchString(value) {
		return value, nil
	}
	if m := accessPointARNPattern.FindStringSubmatch(value); m != nil {
		return m[1], nil
	}
	return "", errBadRequest("%s %q is not valid: want an access point ID (fsap-[0-9a-f]{8,40}) or its ARN",
		field, truncate(value, 140))
}

// validateRootPath checks RootDirectory.Path against the EFS rule: "/" or one to four components, at most 100
// characters, no component starting with "." and none of the characters $#<>;`|&?{}^* or newline
// (pattern ^(\/|(\/(?!\.)+[^$#<>;`|&?{}^*/\n]+){1,4})$).
func validateRootPath(p string) *apiError {
	bad := func(why string) *apiError {
		return errBadRequest("RootDirectory.Path %q is not valid: %s; want \"/\" or up to 4 directories "+
			"like /a/b/c/d, at most 100 characters", truncate(p, 120), why)
	}
	if len(p) < 1 || len(p) > 100 {
		return bad("length must be 1 to 100")
	}
	if p == "/" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return bad("must start with /")
	}
	parts := strings.Split(p[1:], "/")
	if len(parts) > 4 {
		return bad("more than 4 directories")
	}
	for _, c := range parts {
		switch {
		case c == "":
			return bad("empty directory name")
		case strings.HasPrefix(c, "."):
			return bad("a directory name starts with '.'")
		case strings.ContainsAny(c, "$#<>;`|&?{}^*\n"):
			return bad("a directory name contains one of $#<>;`|&?{}^* or a newline")
		}
	}
	return nil
}

// validateTags checks tags as EFS does: at most 50, keys 1–128 characters and not starting with "aws:",
// values at most 256 characters, no duplicate keys.
func validateTags(field string, tags []Tag) *apiError {
	if len(tags) > 50 {
		return errBadRequest("%s has %d tags: at most 50 are allowed", field, len(tags))
	}
	seen := map[string]bool{}
	for _, t := range tags {
		switch {
		case len(t.Key) < 1 || len(t.Key) > 128:
			return errBadRequest("%s key %q is not valid: want 1 to 128 characters", field, truncate(t.Key, 140))
		case strings.HasPrefix(strings.ToLower(t.Key), "aws:"):
			return errBadRequest("%s key %q is not valid: the aws: prefix is reserved", field, t.Key)
		case len(t.Value) > 256:
			return errBadRequest("%s value of key %q is not valid: want at most 256 characters", field, t.Key)
		case seen[t.Key]:
			return errBadRequest("%s has key %q more than once", field, t.Key)
		}
		seen[t.Key] = true
	}
	return nil
}

// mergeTags sets the given tags on top of existing ones (same key: new value).
func mergeTags(existing, add []Tag) []Tag {
	out := append([]Tag(nil), existing...)
	for _, t := range add {
		replaced := false
		for i := range out {
			if out[i].Key == t.Key {
				out[i].Value = t.Value
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, t)
		}
	}
	return out
}

// removeTags drops the tags with the given keys.
func removeTags(existing []Tag, keys []string) []Tag {
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	out := existing[:0:0]
	for _, t := range existing {
		if !drop[t.Key] {
			out = append(out, t)
		}
	}
	return out
}
