// Package rootdir deletes an access point's root directory through a temporary mount of its file system, never
// touching anything outside that directory.
package rootdir
