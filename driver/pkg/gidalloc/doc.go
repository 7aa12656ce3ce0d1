// Package gidalloc hands out POSIX GIDs for new access points that no access point of the file system uses,
// from a per-file-system view kept fresh by listing the file system.
package gidalloc
