// Package versions reads images/versions.conf, the one file every version-like value of the build comes from:
// Go and OpenShift versions, builder and base images, the bundle's OpenShift range and the images' CPE.
package versions

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// File is the path of the versions file below the repository root.
const File = "images/versions.conf"

// Versions are the values of the versions file.
type Versions struct {
	// Values holds every KEY=VALUE of the file.
	Values map[string]string
}

// Keys the file must define; each must be non-empty.
var Keys = []string{
	"GO_VERSION", "OPENSHIFT_VERSION", "KUBE_VERSION", "OPENSHIFT_MIN_VERSION", "KUBE_MIN_VERSION",
	"BUILDER_IMAGE", "BASE_IMAGE", "OPERATOR_REGISTRY_IMAGE", "CPE",
}

var keyPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Load reads the versions file of the repository at root.
func Load(root string) (Versions, error) {
	path := filepath.Join(root, File)
	f, err := os.Open(path)
	if err != nil {
		return Versions{}, err
	}
	defer f.Close()
	v := Versions{Values: map[string]string{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok || !keyPattern.MatchString(k) || strings.ContainsAny(val, " \t\"'$") {
			return Versions{}, fmt.Errorf("%s line %d: %q: want KEY=VALUE (upper-case key, unquoted value without spaces or $)", path, n, line)
		}
		if _, dup := v.Values[k]; dup {
			return Versions{}, fmt.Errorf("%s line %d: %s is set twice", path, n, k)
		}
		v.Values[k] = val
	}
	if err := sc.Err(); err != nil {
		return Versions{}, err
	}
	for _, k := range Keys {
		if v.Values[k] == "" {
			return Versions{}, fmt.Errorf("%s: %s is not set: want %s=<value>", path, k, k)
		}
	}
	return v, nil
}

// Get returns the value of key ("" when unset).
func (v Versions) Get(key string) string { return v.Values[key] }

// OpenShiftRange is the com.redhat.openshift.versions value: v<min>-v<target>.
func (v Versions) OpenShiftRange() string {
	return "v" + v.Get("OPENSHIFT_MIN_VERSION") + "-v" + v.Get("OPENSHIFT_VERSION")
}
