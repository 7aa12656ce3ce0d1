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

// Supported lists every platform the project ships, in release order (DESIGN.md §1).
func Supported() []Platform {
	return []Platform{
		{OS: "linux", Arch: "amd64"},
		{OS: "linux", Arch: "arm64"},
		{OS: "linux", Arch: "ppc64le"},
		{OS: "linux", Arch: "s390x"},
	}
}

// String is the os/arch form used by PLATFORMS, OCI indexes and `go tool dist list`.
func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Dir is the os_arch directory name used under _output/bin.
func (p Platform) Dir() string { return p.OS + "_" + p.Arch }

// Parse reads a PLATFORMS value: platforms in os/arch form separated by commas or spaces. An empty value means
// every supported platform. Duplicates are dropped and the result keeps the order of Supported, so that the
// same set always builds the same way.
func Parse(value string) ([]Platform, error) {
	fields := strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if len(fields) == 0 {
		return Supported(), nil
	}
	wanted := map[Platform]bool{}
	for _, f := range fields {
		p, err := parseOne(f)
		if err != nil {
			return nil, err
		}
		wanted[p] = true
	}
	var out []Platform
	for _, p := range Supported() {
		if wanted[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

func parseOne(s string) (Platform, error) {
	for _, p := range Supported() {
		if s == p.String() {
			return p, nil
		}
	}
	return Platform{}, fmt.Errorf("PLATFORMS: unknown platform %q: want a comma-separated list of %s", s, supportedList())
}

func supportedList() string {
	names := make([]string, 0, len(Supported()))
	for _, p := range Supported() {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}
