// Package wheeltest builds small but valid wheels for tests: a real zip with WHEEL, METADATA and a RECORD whose
// hashes match, the way a build backend writes them.
package wheeltest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Wheel describes a wheel to generate. Files maps archive paths to contents; executable files end in "*".
type Wheel struct {
	Project string
	Version string
	// Tags is python-abi-platform, default "py3-none-any".
	Tags string
	// Purelib is written as Root-Is-Purelib; the zero value means true.
	NotPurelib bool
	Files      map[string]string
	// Corrupt names a file whose archived content differs from what RECORD says, as in a damaged download.
	Corrupt string
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
	purelib := "true"
	if w.NotPurelib {
		purelib = "false"
	}
	files[distInfo+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: wheeltest\nRoot-Is-Purelib: " + purelib + "\nTag: py3-none-any\n"
	files[distInfo+"/METADATA"] = fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", w.Project, w.Version)
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
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
		if clean == w.Corrupt {
			content += "corrupted"
		}
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
