// Package version reports what this binary was built from: its module's version, the commit and whether the work
// tree had uncommitted changes. The values are stamped at link time by `go tool mage build`.
//
// Both shipped binaries link this one package: the driver, and the operator (whose module requires the driver
// module for it). mage stamps it per binary with that binary's own module version (driver/vX.Y.Z or
// operator/vX.Y.Z), so the operator still says the operator's version; only the code is shared.
package version

import (
	"encoding/json"
	"fmt"
	"runtime"
)

// Stamped with -ldflags "-X". They stay strings because -X can only set strings; an unstamped build (plain
// `go build`, `go test`) says so rather than pretending to be a release.
var (
	version   = "v0.0.0-unstamped"
	commit    = "unknown"
	treeState = "unknown"
	// buildDate is stamped when the build knows it (RFC 3339); unstamped it stays empty, as upstream's does.
	buildDate = ""
)

// EFSClientSource is what the driver reports as the efs-utils client source ([client-info] source).
const EFSClientSource = "k8s"

// Info is the build provenance of the running binary.
type Info struct {
	// Version is the binary's module version: the tag driver/vX.Y.Z or operator/vX.Y.Z without its prefix, or the
	// module's VERSION file.
	Version string
	// Commit is the full git commit hash the binary was built from.
	Commit string
	// TreeState is "clean", "dirty" (uncommitted changes at build time) or "unknown" (not stamped).
	TreeState string
	// GoVersion is the Go toolchain that compiled the binary.
	GoVersion string
	// Platform is GOOS/GOARCH of the binary.
	Platform string
	// BuildDate is the stamped build time, or empty.
	BuildDate string
}

// Get returns the provenance stamped into this binary.
func Get() Info {
	return Info{
		Version:   version,
		Commit:    commit,
		TreeState: treeState,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		BuildDate: buildDate,
	}
}

// String formats the provenance as one line for --version output and start-up logs.
func (i Info) String() string {
	return fmt.Sprintf("version=%s commit=%s tree=%s go=%s platform=%s", i.Version, i.Commit, i.TreeState, i.GoVersion, i.Platform)
}

// upstreamJSON is the --version document of the upstream driver v3.4.1 (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd
// pkg/driver/version.go VersionInfo, printed by cmd/main.go with json.MarshalIndent and two spaces): the same keys in
// the same order, so that scripts reading upstream's output read ours; treeState is added at the end.
type upstreamJSON struct {
	DriverVersion   string `json:"driverVersion"`
	GitCommit       string `json:"gitCommit"`
	BuildDate       string `json:"buildDate"`
	EFSClientSource string `json:"efsClientSource"`
	GoVersion       string `json:"goVersion"`
	Compiler        string `json:"compiler"`
	Platform        string `json:"platform"`
	TreeState       string `json:"treeState"`
}

// JSON formats the provenance as upstream's --version output.
func (i Info) JSON() string {
	b, err := json.MarshalIndent(upstreamJSON{DriverVersion: i.Version, GitCommit: i.Commit, BuildDate: i.BuildDate,
		EFSClientSource: EFSClientSource, GoVersion: i.GoVersion, Compiler: runtime.Compiler, Platform: i.Platform,
		TreeState: i.TreeState}, "", "  ")
	if err != nil { // a struct of strings always marshals
		panic(err)
	}
	return string(b)
}
