// Package progress serialises the one-line progress reports of parallel build steps so that they never interleave.
package progress
