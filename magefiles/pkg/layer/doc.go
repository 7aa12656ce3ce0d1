// Package layer writes reproducible image layers: the same entries always give a byte-identical gzip tar, with
// sorted entries, one fixed modification time, owner root:root and no host metadata.
package layer
