package wheelinstall

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
)

// Installer is the content of the INSTALLER file this package writes.
const Installer = "aws-efs-csi-mage"

// Target says where the scheme's directories are in the image, as clean relative paths.
type Target struct {
	// SitePackages receives purelib and platlib, e.g. "usr/local/lib/python3.9/site-packages".
	SitePackages string
	// Prefix is the scheme's base: scripts go to Prefix/bin, data to Prefix, headers to Prefix/include/site.
	Prefix string
	// Interpreter is the absolute path console scripts and "#!python" shebangs run, e.g. "/usr/bin/python3.9".
	Interpreter string
}

// Install unpacks the wheel read from r (size bytes, named filename) into layer entries below t. It fails on a
// wheel that is not Root-Is-Purelib, whose RECORD does not match its content, or whose paths leave the scheme.
func Install(filename string, r io.ReaderAt, size int64, t Target) ([]layer.Entry, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", filename, err)
	}
	w, err := open(filename, zr)
	if err != nil {
		return nil, err
	}
	in := installation{target: t, wheel: w}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") || f.Name == w.distInfo+"/RECORD" {
			continue
		}
		if err := in.add(f); err != nil {
			return nil, fmt.Errorf("wheel %s: %s: %w", filename, f.Name, err)
		}
	}
	if err := in.scripts(); err != nil {
		return nil, fmt.Errorf("wheel %s: %w", filename, err)
	}
	in.put(path.Join(t.SitePackages, w.distInfo, "INSTALLER"), []byte(Installer+"\n"), 0o644)
	if err := in.record(); err != nil {
		return nil, fmt.Errorf("wheel %s: %w", filename, err)
	}
	sort.Slice(in.entries, func(a, b int) bool { return in.entries[a].Path < in.entries[b].Path })
	return in.entries, nil
}

// wheel is an opened, verified wheel archive.
type wheel struct {
	name     string
	distInfo string
	dataDir  string
	record   map[string]recordRow
}

type recordRow struct {
	hash string
	size int64
}

func open(filename string, zr *zip.Reader) (wheel, error) {
	stem := strings.TrimSuffix(filename, ".whl")
	parts := strings.Split(stem, "-")
	if len(parts) < 5 {
		return wheel{}, fmt.Errorf("wheel file name %q: want name-version-python-abi-platform.whl", filename)
	}
	w := wheel{name: filename, distInfo: parts[0] + "-" + parts[1] + ".dist-info", dataDir: parts[0] + "-" + parts[1] + ".data"}
	meta, err := readFile(zr, w.distInfo+"/WHEEL")
	if err != nil {
		return wheel{}, fmt.Errorf("wheel %s: %w", filename, err)
	}
	fields := headers(string(meta))
	if v := fields["Wheel-Version"]; !strings.HasPrefix(v, "1.") {
		return wheel{}, fmt.Errorf("wheel %s: Wheel-Version %q: want 1.x", filename, v)
	}
	if strings.ToLower(fields["Root-Is-Purelib"]) != "true" {
		return wheel{}, fmt.Errorf("wheel %s: Root-Is-Purelib %q: only pure-Python wheels go into the platform-independent layer", filename, fields["Root-Is-Purelib"])
	}
	rec, err := readFile(zr, w.distInfo+"/RECORD")
	if err != nil {
		return wheel{}, fmt.Errorf("wheel %s: %w", filename, err)
	}
	if w.record, err = parseRecord(rec); err != nil {
		return wheel{}, fmt.Errorf("wheel %s: RECORD: %w", filename, err)
	}
	return w, nil
}

func readFile(zr *zip.Reader, name string) ([]byte, error) {
	f, err := zr.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// headers parses the email-header style of WHEEL and METADATA (first occurrence wins).
func headers(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			if _, dup := out[strings.TrimSpace(k)]; !dup {
				out[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

func parseRecord(data []byte) (map[string]recordRow, error) {
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, err
	}
	out := map[string]recordRow{}
	for _, row := range rows {
		if len(row) != 3 {
			return nil, fmt.Errorf("row %q: want path,hash,size", row)
		}
		r := recordRow{hash: row[1], size: -1}
		if row[2] != "" {
			if r.size, err = strconv.ParseInt(row[2], 10, 64); err != nil {
				return nil, fmt.Errorf("row %q: size %q: want an integer", row, row[2])
			}
		}
		out[row[0]] = r
	}
	return out, nil
}

// recordHash is the RECORD form of a digest: sha256=<urlsafe base64 without padding>.
func recordHash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum[:])
}
