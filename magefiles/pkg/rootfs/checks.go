package rootfs

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Program is an executable a base image must provide.
type Program struct {
	// Name is the file name looked up in Dirs, e.g. "stunnel".
	Name string
	// Dirs are the directories searched, in order ("usr/bin", "sbin", ...).
	Dirs []string
	// Package names what provides it, for the error message (e.g. the RPM).
	Package string
}

// Python is a CPython found in a base image.
type Python struct {
	Major, Minor int
	// Executable is the resolved path of python3, e.g. "usr/bin/python3.9".
	Executable string
}

// String is the version as "3.9".
func (p Python) String() string { return fmt.Sprintf("%d.%d", p.Major, p.Minor) }

// SitePackages is where pip installs as root on RHEL 9 (the /usr/local scheme of the python3 RPM), and what
// `pip install --prefix /usr/local` gives on any CPython: usr/local/lib/python3.N/site-packages.
func (p Python) SitePackages() string {
	return fmt.Sprintf("usr/local/lib/python%d.%d/site-packages", p.Major, p.Minor)
}

var versionedPython = regexp.MustCompile(`^python(\d+)\.(\d+)$`)

// FindPython locates python3 on the usual paths and reads its version from the name of the real executable
// (python3 is a symlink to python3.N in RHEL and Debian) or, failing that, from the standard library directory.
func (f *FS) FindPython() (Python, error) {
	for _, candidate := range []string{"usr/bin/python3", "usr/local/bin/python3", "bin/python3"} {
		real, n, err := f.Resolve(candidate)
		if err != nil || n.Kind != File {
			continue
		}
		if m := versionedPython.FindStringSubmatch(path.Base(real)); m != nil {
			return pythonFrom(m, real)
		}
		for _, lib := range []string{"usr/lib64", "usr/lib"} {
			if py, ok := f.stdlibPython(lib, real); ok {
				return py, nil
			}
		}
	}
	return Python{}, fmt.Errorf("python3: not found at /usr/bin/python3, /usr/local/bin/python3 or /bin/python3")
}

func (f *FS) stdlibPython(lib, exe string) (Python, bool) {
	var found []Python
	for _, p := range f.Paths() {
		dir, base := path.Split(p)
		if clean(dir) != lib {
			continue
		}
		if m := versionedPython.FindStringSubmatch(base); m != nil {
			if _, ok := f.nodes[path.Join(p, "os.py")]; ok {
				py, _ := pythonFrom(m, exe)
				found = append(found, py)
			}
		}
	}
	if len(found) != 1 {
		return Python{}, false
	}
	return found[0], true
}

func pythonFrom(m []string, exe string) (Python, error) {
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return Python{}, fmt.Errorf("python3 at /%s: cannot read the version from %q", exe, m[0])
	}
	return Python{Major: major, Minor: minor, Executable: exe}, nil
}

// Missing checks that the file system has a python3 of at least minMinor (3.minMinor) and every program, and
// returns one line per missing piece, sorted; nil means everything is there.
func (f *FS) Missing(minMinor int, programs []Program) []string {
	var missing []string
	py, err := f.FindPython()
	switch {
	case err != nil:
		missing = append(missing, fmt.Sprintf("python3 (3.%d or newer, RPM python3): %v", minMinor, err))
	case py.Major != 3 || py.Minor < minMinor:
		missing = append(missing, fmt.Sprintf("python3 (3.%d or newer, RPM python3): found %s at /%s", minMinor, py, py.Executable))
	}
	for _, prog := range programs {
		if _, ok := f.findProgram(prog); !ok {
			var where []string
			for _, d := range prog.Dirs {
				where = append(where, "/"+path.Join(d, prog.Name))
			}
			missing = append(missing, fmt.Sprintf("%s (RPM %s): no executable at %s", prog.Name, prog.Package, strings.Join(where, ", ")))
		}
	}
	sort.Strings(missing)
	return missing
}

// findProgram returns the resolved path of an executable regular file named prog.Name in one of prog.Dirs.
func (f *FS) findProgram(prog Program) (string, bool) {
	for _, d := range prog.Dirs {
		real, n, err := f.Resolve(path.Join(d, prog.Name))
		if err == nil && n.Kind == File && n.Mode&0o111 != 0 {
			return real, true
		}
	}
	return "", false
}

// EFSUtilsPrograms are the executables efs-utils runs besides python3: the TLS relay and the NFS mount helper.
func EFSUtilsPrograms() []Program {
	return []Program{
		{Name: "stunnel", Dirs: []string{"usr/bin", "usr/sbin", "bin", "sbin"}, Package: "stunnel"},
		{Name: "mount.nfs4", Dirs: []string{"sbin", "usr/sbin"}, Package: "nfs-utils"},
	}
}
