package volume

import "strings"

// DotElements reports whether a slash-separated path has ".." and "." elements. It is the one path-safety rule
// of the driver, used for volume handle paths, the basePath and subPathPattern parameters, access point root
// directories and root-directory deletion: a path with ".." can leave the directory it is meant to stay in.
func DotElements(p string) (dotDot, dot bool) {
	for _, e := range strings.Split(p, "/") {
		switch e {
		case "..":
			dotDot = true
		case ".":
			dot = true
		}
	}
	return dotDot, dot
}
