// Package wheeltest builds small but valid wheels for tests (a real zip with WHEEL, METADATA and a RECORD whose
// hashes match, the way a build backend writes them) and stand-in source distributions (a setuptools project).
package wheeltest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Wheel describes a wheel to generate. Files maps archive paths to contents; executable files end in "*".
type Wheel struct {
	Project string
	Version string
	// Tags is python-abi-platform, default "py3-none-any".
	Tags  string
	Files map[string]string
}

// Filename is the PEP 427 file name.
func (w Wheel) Filename() string {
	tags := w.Tags
	if tags == "" {
		tags = "py3-none-any"
	}
	return fmt.Sprintf("%s-%s-%s.whl", strings.ReplaceAll(w.Project, "-", "_"), w.Version, tags)
}

// Bytes returns the wheel archive.
func (w Wheel) Bytes() []byte {
	distInfo := fmt.Sprintf("%s-%s.dist-info", strings.ReplaceAll(w.Project, "-", "_"), w.Version)
	files := map[string]string{}
	for k, v := range w.Files {
		files[k] = v
	}
	files[distInfo+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: wheeltest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	files[distInfo+"/METADATA"] = fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", w.Project, w.Version)
	names := slices.Sorted(maps.Keys(files))
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range names {
		content := files[name]
		clean := strings.TrimSuffix(name, "*")
		h := &zip.FileHeader{Name: clean, Method: zip.Deflate, Modified: time.Unix(315532800, 0).UTC()}
		h.SetMode(0o644)
		if clean != name {
			h.SetMode(0o755)
		}
		f, _ := zw.CreateHeader(h)
		sum := sha256.Sum256([]byte(content))
		f.Write([]byte(content))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", clean, base64.RawURLEncoding.EncodeToString(sum[:]), len(content))
	}
	record.WriteString(distInfo + "/RECORD,,\n")
	f, _ := zw.Create(distInfo + "/RECORD")
	f.Write([]byte(record.String()))
	zw.Close()
	return buf.Bytes()
}

// SHA256 is the hex digest of data, the form requirements files pin.
func SHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Sdist describes a source distribution to generate: a setuptools project (setup.py and PKG-INFO) whose packages
// are the directories of Files holding an __init__.py; other files under a package are package data.
type Sdist struct {
	Project string
	Version string
	Files   map[string]string
}

// Filename is the sdist file name, name-version.tar.gz.
func (s Sdist) Filename() string { return fmt.Sprintf("%s-%s.tar.gz", s.Project, s.Version) }

// Bytes returns the gzipped tar archive, the same bytes every time.
func (s Sdist) Bytes() []byte {
	top := fmt.Sprintf("%s-%s", s.Project, s.Version)
	files := map[string]string{}
	var packages []string
	data := map[string][]string{}
	for name, content := range s.Files {
		files[name] = content
		if strings.HasSuffix(name, "/__init__.py") {
			packages = append(packages, strings.ReplaceAll(strings.TrimSuffix(name, "/__init__.py"), "/", "."))
		}
	}
	sort.Strings(packages)
	for name := range s.Files {
		if strings.HasSuffix(name, ".py") {
			continue
		}
		for _, p := range packages {
			dir := strings.ReplaceAll(p, ".", "/") + "/"
			if rest, ok := strings.CutPrefix(name, dir); ok && !strings.Contains(rest, "__init__") {
				data[p] = append(data[p], rest)
			}
		}
	}
	var pkgData []string
	for p, fs := range data {
		sort.Strings(fs)
		pkgData = append(pkgData, fmt.Sprintf("%q: %s", p, pyList(fs)))
	}
	sort.Strings(pkgData)
	files["setup.py"] = fmt.Sprintf("from setuptools import setup\n\nsetup(\n    name=%q,\n    version=%q,\n    packages=%s,\n    package_data={%s},\n    python_requires='>=3.9',\n)\n",
		s.Project, s.Version, pyList(packages), strings.Join(pkgData, ", "))
	files["PKG-INFO"] = fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", s.Project, s.Version)
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, name := range names {
		tw.WriteHeader(&tar.Header{Name: top + "/" + name, Mode: 0o644, Size: int64(len(files[name])), ModTime: time.Unix(315532800, 0), Typeflag: tar.TypeReg, Format: tar.FormatPAX})
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func pyList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
