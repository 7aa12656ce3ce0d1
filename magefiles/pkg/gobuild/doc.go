// Package gobuild cross-compiles the project's programs into reproducible, version-stamped binaries, skipping
// those whose inputs have not changed since the last build.
package gobuild
