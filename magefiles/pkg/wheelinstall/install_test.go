package wheelinstall

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/wheeltest"
)

var target = Target{SitePackages: "usr/local/lib/python3.9/site-packages", Prefix: "usr/local", Interpreter: "/usr/bin/python3.9"}

func install(t *testing.T, w wheeltest.Wheel) ([]layer.Entry, error) {
	t.Helper()
	data := w.Bytes()
	return Install(w.Filename(), bytes.NewReader(data), int64(len(data)), target)
}

func TestInstallFollowsTheWheelSpec(t *testing.T) {
	w := wheeltest.Wheel{Project: "botocore", Version: "1.34.140", Files: map[string]string{
		"botocore/__init__.py":                         "__version__ = '1.34.140'\n",
		"botocore/data/s3/service-2.json":              "{}\n",
		"botocore-1.34.140.data/scripts/tool*":         "#!python -u\nprint('hi')\n",
		"botocore-1.34.140.data/data/share/doc/x.txt":  "doc\n",
		"botocore-1.34.140.dist-info/entry_points.txt": "[console_scripts]\nboto-cli = botocore.cli:main\n[other]\nx = y:z\n",
	}}
	entries, err := install(t, w)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]layer.Entry{}
	var lines []string
	for _, e := range entries {
		got[e.Path] = e
		lines = append(lines, fmt.Sprintf("%s %o", e.Path, e.Mode))
	}
	sp := target.SitePackages + "/"
	want := []string{
		"usr/local/bin/boto-cli 755",
		"usr/local/bin/tool 755",
		sp + "botocore-1.34.140.dist-info/INSTALLER 644",
		sp + "botocore-1.34.140.dist-info/METADATA 644",
		sp + "botocore-1.34.140.dist-info/RECORD 644",
		sp + "botocore-1.34.140.dist-info/WHEEL 644",
		sp + "botocore-1.34.140.dist-info/entry_points.txt 644",
		sp + "botocore/__init__.py 644",
		sp + "botocore/data/s3/service-2.json 644",
		"usr/local/share/doc/x.txt 644",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("installed:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if s := string(got["usr/local/bin/tool"].Data); s != "#!/usr/bin/python3.9 -u\nprint('hi')\n" {
		t.Errorf("script shebang not rewritten: %q", s)
	}
	if s := string(got["usr/local/bin/boto-cli"].Data); !strings.HasPrefix(s, "#!/usr/bin/python3.9\n") || !strings.Contains(s, "from botocore.cli import main\n") {
		t.Errorf("console script:\n%s", s)
	}
	if s := string(got[sp+"botocore-1.34.140.dist-info/INSTALLER"].Data); s != Installer+"\n" {
		t.Errorf("INSTALLER = %q", s)
	}
	rows, err := csv.NewReader(bytes.NewReader(got[sp+"botocore-1.34.140.dist-info/RECORD"].Data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	record := map[string][]string{}
	for _, r := range rows {
		record[r[0]] = r
	}
	if len(rows) != len(entries) {
		t.Errorf("RECORD has %d rows for %d installed files", len(rows), len(entries))
	}
	if r := record["../../../bin/tool"]; len(r) != 3 || r[1] != recordHash(got["usr/local/bin/tool"].Data) {
		t.Errorf("RECORD row of the script = %v; want the hash of the rewritten script", r)
	}
	if r := record["botocore-1.34.140.dist-info/RECORD"]; len(r) != 3 || r[1] != "" || r[2] != "" {
		t.Errorf("RECORD's own row = %v, want no hash and no size", r)
	}
}

func TestInstallRefuses(t *testing.T) {
	good := wheeltest.Wheel{Project: "six", Version: "1.15.0", Files: map[string]string{"six.py": "x\n"}}
	corrupt := good
	corrupt.Corrupt = "six.py"
	rows := []struct {
		name string
		w    wheeltest.Wheel
		raw  []byte
		want string
	}{
		{"platlib wheel", wheeltest.Wheel{Project: "native", Version: "1.0", NotPurelib: true}, nil, `Root-Is-Purelib "false"`},
		{"unknown scheme", wheeltest.Wheel{Project: "odd", Version: "1.0", Files: map[string]string{"odd-1.0.data/weird/x": "x"}}, nil, `unknown scheme directory "weird"`},
		{"escaping path", wheeltest.Wheel{Project: "evil", Version: "1.0", Files: map[string]string{"../../etc/passwd": "x"}}, nil, "unsafe path"},
		{"record mismatch", corrupt, nil, "six.py: content hash"},
		{"not a zip", good, []byte("not a zip"), "zip: not a valid zip file"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			data := row.raw
			if data == nil {
				data = row.w.Bytes()
			}
			_, err := Install(row.w.Filename(), bytes.NewReader(data), int64(len(data)), target)
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("Install = %v, want an error containing %q", err, row.want)
			}
		})
	}
}
