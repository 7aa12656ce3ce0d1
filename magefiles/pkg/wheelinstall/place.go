package wheelinstall

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
)

// installation collects the entries of one wheel.
type installation struct {
	target  Target
	wheel   wheel
	entries []layer.Entry
	// sums maps each installed file to its RECORD hash and size.
	sums map[string]recordRow
	// entryPoints holds entry_points.txt, read while adding files.
	entryPoints []byte
}

func (in *installation) put(p string, data []byte, mode int64) {
	if in.sums == nil {
		in.sums = map[string]recordRow{}
	}
	in.entries = append(in.entries, layer.Entry{Path: p, Kind: layer.File, Mode: mode, Data: data})
	in.sums[p] = recordRow{hash: recordHash(data), size: int64(len(data))}
}

// add verifies one archive member against the wheel's RECORD and places it.
func (in *installation) add(f *zip.File) error {
	name := f.Name
	if path.IsAbs(name) || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." {
		return fmt.Errorf("unsafe path: want a relative path inside the wheel")
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return err
	}
	row, listed := in.wheel.record[name]
	switch {
	case !listed:
		return fmt.Errorf("not listed in RECORD: the wheel is not intact")
	case row.hash != recordHash(data):
		return fmt.Errorf("content hash %s does not match RECORD's %s: the wheel is not intact", recordHash(data), row.hash)
	case row.size >= 0 && row.size != int64(len(data)):
		return fmt.Errorf("size %d does not match RECORD's %d", len(data), row.size)
	}
	if name == in.wheel.distInfo+"/entry_points.txt" {
		in.entryPoints = data
	}
	mode := int64(0o644)
	if f.Mode()&0o111 != 0 {
		mode = 0o755
	}
	dest, isScript, err := in.destination(name)
	if err != nil {
		return err
	}
	if isScript {
		data, mode = in.fixShebang(data), 0o755
	}
	in.put(dest, data, mode)
	return nil
}

// destination maps an archive path to its place in the image, spreading name.data/<scheme>/ over the scheme.
func (in *installation) destination(name string) (string, bool, error) {
	rest, ok := strings.CutPrefix(name, in.wheel.dataDir+"/")
	if !ok {
		return path.Join(in.target.SitePackages, name), false, nil
	}
	scheme, sub, _ := strings.Cut(rest, "/")
	switch scheme {
	case "purelib", "platlib":
		return path.Join(in.target.SitePackages, sub), false, nil
	case "scripts":
		return path.Join(in.target.Prefix, "bin", sub), true, nil
	case "data":
		return path.Join(in.target.Prefix, sub), false, nil
	case "headers":
		project := strings.SplitN(in.wheel.distInfo, "-", 2)[0]
		return path.Join(in.target.Prefix, "include", "site", "python3", project, sub), false, nil
	}
	return "", false, fmt.Errorf("unknown scheme directory %q under %s: want purelib, platlib, scripts, data or headers", scheme, in.wheel.dataDir)
}

var pythonShebang = regexp.MustCompile(`^#!python(w)?[ \t]*(.*)$`)

// fixShebang rewrites the "#!python" first line of a script to the image's interpreter (PEP 427).
func (in *installation) fixShebang(data []byte) []byte {
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	m := pythonShebang.FindSubmatch(bytes.TrimRight(first, "\r"))
	if m == nil {
		return data
	}
	line := "#!" + in.target.Interpreter
	if len(m[2]) > 0 {
		line += " " + string(m[2])
	}
	return append([]byte(line+"\n"), rest...)
}

var entryPoint = regexp.MustCompile(`^([A-Za-z0-9_.\-]+)\s*=\s*([A-Za-z0-9_.]+)\s*:\s*([A-Za-z0-9_.]+)\s*(\[.*\])?$`)

// scripts writes a launcher for each console_scripts entry point.
func (in *installation) scripts() error {
	section := ""
	for _, raw := range strings.Split(string(in.entryPoints), "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
			continue
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			continue
		case section != "console_scripts":
			continue
		}
		m := entryPoint.FindStringSubmatch(line)
		if m == nil {
			return fmt.Errorf("entry_points.txt: console script %q: want name = module:function", line)
		}
		head, _, _ := strings.Cut(m[3], ".")
		script := fmt.Sprintf("#!%s\nimport re\nimport sys\nfrom %s import %s\nif __name__ == '__main__':\n"+
			"    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit(%s())\n",
			in.target.Interpreter, m[2], head, m[3])
		in.put(path.Join(in.target.Prefix, "bin", m[1]), []byte(script), 0o755)
	}
	return nil
}

// record writes the installed RECORD: every installed file relative to site-packages, RECORD itself last
// without a hash.
func (in *installation) record() error {
	var rows [][]string
	recordPath := path.Join(in.target.SitePackages, in.wheel.distInfo, "RECORD")
	for p, row := range in.sums {
		rel, err := filepath.Rel(in.target.SitePackages, p)
		if err != nil {
			return err
		}
		rows = append(rows, []string{filepath.ToSlash(rel), row.hash, fmt.Sprint(row.size)})
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a][0] < rows[b][0] })
	rel, _ := filepath.Rel(in.target.SitePackages, recordPath)
	rows = append(rows, []string{filepath.ToSlash(rel), "", ""})
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	in.entries = append(in.entries, layer.Entry{Path: recordPath, Kind: layer.File, Mode: 0o644, Data: buf.Bytes()})
	return nil
}
