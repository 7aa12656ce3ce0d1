// Package gobuild compiles the project's programs into reproducible, version-stamped binaries, skipping those whose
// inputs have not changed since the last build. It has two modes: Static (cross-compiled, for local development)
// and FIPS (cgo, dynamic, checked against openshift/check-payload's rules: what the images ship).
package gobuild
