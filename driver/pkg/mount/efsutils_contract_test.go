package mount

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// mountEFSCheck runs our mount.efs's own argument checks (efs-utils/efs_utils/options.py) over JSON rows of
// {"source", "options"} on stdin and prints one line per row: "ok" or the error mount.efs would stop with.
const mountEFSCheck = `import json, sys
sys.path.insert(0, sys.argv[1])
from efs_utils import options
for row in json.load(sys.stdin):
    try:
        remote, _ = options.match_device(row["source"])
        if not options.FS_ID_RE.match(remote):
            raise ValueError("source %s is not fs-<id>[:/path]" % row["source"])
        options.validate(options.parse_options(",".join(row["options"])))
        print("ok")
    except Exception as e:
        print("refused: %s" % e)
`

// TestComposedMountsPassMountEFS composes the mounts the node publishes (every option the driver adds: tls,
// accesspoint, mounttargetip, crossaccount, ro, and user options passed through) and has our mount.efs check them
// as mount(8) would hand them over: the driver must never build a mount that its own mount helper refuses.
func TestComposedMountsPassMountEFS(t *testing.T) {
	handle := func(s string) volume.Handle {
		h, err := volume.ParseHandle(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	reqs := map[string]Request{
		"root, TLS default":       {Handle: handle(fsID)},
		"sub path":                {Handle: handle(fsID + ":/a/b")},
		"access point":            {Handle: handle(fsID + "::" + apID)},
		"typed access point path": {Handle: handle("efs:" + fsID + ":/x:" + apID)},
		"no TLS":                  {Handle: handle(fsID), Context: volume.Context{EncryptInTransit: boolPtr(false)}},
		"mount target IP":         {Handle: handle(fsID), Context: volume.Context{MountTargetIP: "10.0.1.5"}},
		"IP map":                  {Handle: handle(fsID), Context: volume.Context{MountTargetIPs: map[string]string{"use1-az1": "10.0.1.5"}}, Node: Node{ZoneID: "use1-az1"}},
		"cross account":           {Handle: handle(fsID + "::" + apID), Context: volume.Context{CrossAccount: true}},
		"read-only":               {Handle: handle(fsID + "::" + apID), ReadOnly: true, MountFlags: []string{"rw"}},
		"user iam options":        {Handle: handle(fsID + "::" + apID), MountFlags: []string{"iam,awsprofile=p", "tlsport=20100", "noresvport"}},
		"no TLS with port":        {Handle: handle(fsID), Context: volume.Context{EncryptInTransit: boolPtr(false)}, MountFlags: []string{"port=2049"}},
	}
	type row struct {
		Name    string   `json:"name"`
		Source  string   `json:"source"`
		Options []string `json:"options"`
	}
	var rows []row
	for name, r := range reqs {
		spec, err := Compose(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows = append(rows, row{Name: name, Source: spec.Source, Options: spec.Options})
	}
	in, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "-c", mountEFSCheck, "../../../efs-utils")
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running efs-utils' option checks: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("efs-utils answered %d lines for %d mounts:\n%s", len(lines), len(rows), out)
	}
	for i, r := range rows {
		if lines[i] != "ok" {
			t.Errorf("%s: mount.efs %s -o %s: %s", r.Name, r.Source, strings.Join(r.Options, ","), lines[i])
		}
	}
}
