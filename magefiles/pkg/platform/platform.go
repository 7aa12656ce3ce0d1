// Package platform names the operating system and architecture pairs this project builds for.
package platform

import (
	"fmt"
	"strings"
)

// Platform is one GOOS/GOARCH pair.
type Platform struct {
	OS   string
	Arch string
}

// Supported lists the platforms the project ships by default, in release order: EFS exists only on AWS, whose
// instances are amd64 and arm64, and OpenShift's own EFS operator declares those two (DESIGN.md §1).
func Supported() []Platform {
	return []Platform{
		{OS: "linux", Arch: "amd64"},
		{OS: "linux", Arch: "arm64"},
	}
}

// Known lists every platform PLATFORMS accepts: the supported ones, then ppc64le and s390x for whoever builds
// them on purpose.
func Known() []Platform {
	return append(Supported(), Platform{OS: "linux", Arch: "ppc64le"}, Platform{OS: "linux", Arch: "s390x"})
}

// String is the os/arch form used by PLATFORMS, OCI indexes and `go tool dist list`.
func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Dir is the os_arch directory name used under _output/bin.
func (p Platform) Dir() string { return p.OS + "_" + p.Arch }

// Parse reads a PLATFORMS value: platforms in os/arch form separated by commas or spaces. An empty value means
// the supported platforms (amd64 and arm64). Duplicates are dropped and the result keeps the order of Known, so
// that the same set always builds the same way.
func Parse(value string) ([]Platform, error) {
	fields := strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if len(fields) == 0 {
		return Supported(), nil
	}
	wanted := map[Platform]bool{}
	for _, f := range fields {
		p, err := ParseOne(f)
		if err != nil {
			return nil, err
		}
		wanted[p] = true
	}
	var out []Platform
	for _, p := range Known() {
		if wanted[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// ParseOne reads one os/arch platform.
func ParseOne(s string) (Platform, error) {
	for _, p := range Known() {
		if s == p.String() {
			return p, nil
		}
	}
	return Platform{}, fmt.Errorf("PLATFORMS: unknown platform %q: want a comma-separated list of %s", s, knownList())
}

func knownList() string {
	names := make([]string, 0, len(Known()))
	for _, p := range Known() {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}
