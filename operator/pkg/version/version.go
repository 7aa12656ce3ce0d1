// Package version reports what this binary was built from: the operator module's version, the commit and whether the
// work tree had uncommitted changes. The values are stamped at link time by `go tool mage build`.
package version

import (
	"fmt"
	"runtime"
)

// Stamped with -ldflags "-X". They stay strings because -X can only set strings; an unstamped build (plain
// `go build`, `go test`) says so rather than pretending to be a release.
var (
	version   = "v0.0.0-unstamped"
	commit    = "unknown"
	treeState = "unknown"
)

// Info is the build provenance of the running binary.
type Info struct {
	// Version is the module version: the tag operator/vX.Y.Z without its prefix, or the module's VERSION file.
	Version string
	// Commit is the full git commit hash the binary was built from.
	Commit string
	// TreeState is "clean", "dirty" (uncommitted changes at build time) or "unknown" (not stamped).
	TreeState string
	// GoVersion is the Go toolchain that compiled the binary.
	GoVersion string
	// Platform is GOOS/GOARCH of the binary.
	Platform string
}

// Get returns the provenance stamped into this binary.
func Get() Info {
	return Info{
		Version:   version,
		Commit:    commit,
		TreeState: treeState,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String formats the provenance as one line for --version output and start-up logs.
func (i Info) String() string {
	return fmt.Sprintf("version=%s commit=%s tree=%s go=%s platform=%s", i.Version, i.Commit, i.TreeState, i.GoVersion, i.Platform)
}
