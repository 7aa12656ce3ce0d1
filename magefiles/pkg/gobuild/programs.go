package gobuild

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
)

// Program is one binary the project ships.
type Program struct {
	// Module is the module directory under the repository root; it is also the prefix of the module's version
	// tags (driver/v1.2.3).
	Module string
	// ModulePath is the module's import path.
	ModulePath string
	// Binary is the file name of the built program and the name of its directory under cmd/.
	Binary string
	// VersionPackage is the import path whose variables the linker stamps with the module's version, commit and
	// tree state. Both shipped programs link the driver module's pkg/version, each stamped with its own module's
	// version.
	VersionPackage string
}

// Package is the main package, relative to the module directory.
func (p Program) Package() string { return "./cmd/" + p.Binary }

// sharedVersionPackage holds the build provenance of both programs (one copy; see its package doc).
const sharedVersionPackage = "github.com/openshift/aws-efs-csi/driver/pkg/version"

// Programs lists every program the release builds.
func Programs() []Program {
	return []Program{
		{Module: "driver", ModulePath: "github.com/openshift/aws-efs-csi/driver", Binary: "aws-efs-csi-driver",
			VersionPackage: sharedVersionPackage},
		{Module: "operator", ModulePath: "github.com/openshift/aws-efs-csi/operator", Binary: "aws-efs-csi-driver-operator",
			VersionPackage: sharedVersionPackage},
	}
}

// Artefact is one program compiled for one platform.
type Artefact struct {
	Program  Program
	Platform platform.Platform
}

// String names the artefact in progress lines, e.g. "aws-efs-csi-driver linux/arm64".
func (a Artefact) String() string { return a.Program.Binary + " " + a.Platform.String() }

// RelPath is where the artefact is written, relative to the binaries directory: linux_arm64/aws-efs-csi-driver.
func (a Artefact) RelPath() string { return path.Join(a.Platform.Dir(), a.Program.Binary) }

// ParseJobs reads BUILD_JOBS: empty means def, anything else must be a positive integer.
func ParseJobs(value string, def int) (int, error) {
	if value == "" {
		return def, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("BUILD_JOBS %q: want a positive integer, e.g. 2", value)
	}
	return n, nil
}

// SelectPrograms reads PROGRAMS: empty means every program, else a comma-separated list of binary names (an
// image's builder stage compiles only its own binary).
func SelectPrograms(value string) ([]Program, error) {
	if value == "" {
		return Programs(), nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(value, ",") {
		want[strings.TrimSpace(name)] = true
	}
	var out []Program
	var names []string
	for _, p := range Programs() {
		names = append(names, p.Binary)
		if want[p.Binary] {
			out = append(out, p)
			delete(want, p.Binary)
		}
	}
	for name := range want {
		return nil, fmt.Errorf("PROGRAMS: unknown program %q: want a comma-separated list of %s", name, strings.Join(names, ", "))
	}
	return out, nil
}
