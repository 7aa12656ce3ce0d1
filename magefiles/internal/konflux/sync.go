package konflux

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// instructions joins a Containerfile's continuation lines and drops comments, one instruction per element.
func instructions(containerfile string) ([]string, error) {
	data, err := os.ReadFile(containerfile)
	if err != nil {
		return nil, err
	}
	var out []string
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") || (t == "" && cur == "") {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cur += strings.TrimSuffix(t, "\\") + " "
			continue
		}
		out = append(out, strings.TrimSpace(cur+t))
		cur = ""
	}
	return out, nil
}

var labelPair = regexp.MustCompile(`([A-Za-z0-9_./-]+)=("(?:[^"\\]|\\.)*"|\S+)`)

// Labels returns the LABEL key=value pairs of a Containerfile's last stage.
func Labels(containerfile string) (map[string]string, error) {
	ins, err := instructions(containerfile)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for _, in := range ins {
		if strings.HasPrefix(strings.ToUpper(in), "FROM ") {
			labels = map[string]string{}
		}
		if !strings.HasPrefix(strings.ToUpper(in), "LABEL ") {
			continue
		}
		for _, m := range labelPair.FindAllStringSubmatch(in[len("LABEL "):], -1) {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				if v, err = strconv.Unquote(v); err != nil {
					return nil, fmt.Errorf("%s: LABEL %s: %w", containerfile, m[1], err)
				}
			}
			labels[m[1]] = v
		}
	}
	return labels, nil
}

// DNFPackages returns the packages of every `dnf install` in a Containerfile, sorted.
func DNFPackages(containerfile string) ([]string, error) {
	ins, err := instructions(containerfile)
	if err != nil {
		return nil, err
	}
	var pkgs []string
	for _, in := range ins {
		for _, cmd := range strings.Split(in, "&&") {
			f := strings.Fields(cmd)
			for i := 0; i+1 < len(f); i++ {
				if f[i] == "dnf" && f[i+1] == "install" {
					for _, a := range f[i+2:] {
						if !strings.HasPrefix(a, "-") {
							pkgs = append(pkgs, a)
						}
					}
				}
			}
		}
	}
	sort.Strings(pkgs)
	return pkgs, nil
}

// LockInputPackages returns the packages of an rpm-lockfile-prototype input file, sorted.
func LockInputPackages(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in struct {
		Packages []string `json:"packages"`
	}
	if err := yaml.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sort.Strings(in.Packages)
	return in.Packages, nil
}
