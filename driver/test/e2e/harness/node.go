package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Node is a scratch node: efs-utils directories, the recorder's export and logs, and the driver's flags and
// environment pointing at them.
type Node struct {
	Dir, Socket, StateDir, ConfigDir, Link, Records, Export, MountTable, RecorderLog string
	Args                                                                             []string
	Env                                                                              []string
}

// NewNode lays out a node under dir. awsURL is fakeaws (AWS APIs and instance metadata); caFile the mount target
// CA.
func NewNode(t *testing.T, dir, awsURL, caFile string) *Node {
	t.Helper()
	repo := Repo(t)
	n := &Node{Dir: dir, Socket: filepath.Join(dir, "csi.sock"), StateDir: filepath.Join(dir, "run-efs"),
		ConfigDir: filepath.Join(dir, "var-amazon-efs"), Link: filepath.Join(dir, "etc-amazon", "efs"),
		Records: filepath.Join(dir, "records"), Export: filepath.Join(dir, "export"),
		MountTable: filepath.Join(dir, "nfs-mounts"), RecorderLog: filepath.Join(dir, "recorder.jsonl")}
	for _, d := range []string{n.Export, filepath.Join(dir, "log"), filepath.Join(dir, "static")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(n.MountTable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// the image's static files: the CA bundle efs-utils verifies mount targets with
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "static", "efs-utils.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	n.Args = []string{"--endpoint=unix://" + n.Socket, "--region=" + Region, "--v=4",
		"--efs-utils-config-dir-path=" + n.ConfigDir, "--efs-utils-config-legacy-dir-path=" + filepath.Join(dir, "etc-amazon-efs-legacy"),
		"--efs-utils-static-files-path=" + filepath.Join(dir, "static"), "--efs-utils-config-link-path=" + n.Link,
		"--efs-utils-state-dir=" + n.StateDir, "--publish-records-dir=" + n.Records,
		"--efs-utils-watchdog-path=" + filepath.Join(repo, "efs-utils", "bin", "amazon-efs-mount-watchdog"),
		// the CA is the one copied from the static files, read through the /etc/amazon/efs link
		"--efs-utils-conf-overrides=mount:stunnel_cafile=" + filepath.Join(n.Link, "efs-utils.crt") + ",mount:optimize_readahead=false",
	}
	n.Env = append(os.Environ(),
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin", // python3 is Debian's, with cryptography and botocore
		"EFS_UTILS_CONFIG_FILE="+filepath.Join(n.Link, "efs-utils.conf"), "EFS_UTILS_PRIVATE_KEY="+filepath.Join(n.Link, "privateKey.pem"),
		"EFS_UTILS_STATE_DIR="+n.StateDir, "EFS_UTILS_LOG_DIR="+filepath.Join(dir, "log"), "EFS_UTILS_STUNNEL="+Stunnel,
		"EFS_UTILS_MOUNT_NFS4="+filepath.Join(repo, "efs-utils", "efs_utils", "testdata", "mount_nfs4_recorder.py"),
		"EFS_UTILS_PROC_MOUNTS="+n.MountTable, "RECORDER_LOG="+n.RecorderLog, "RECORDER_EXPORT="+n.Export, "RECORDER_PROBE=1",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT="+awsURL, "AWS_ENDPOINT_URL="+awsURL, "AWS_ACCESS_KEY_ID=AKIAFAKEAWSE2E00001",
		"AWS_SECRET_ACCESS_KEY=fake-secret", "AWS_REGION="+Region, "AWS_DEFAULT_REGION="+Region, "PYTHONDONTWRITEBYTECODE=1",
		"CSI_NODE_NAME=", "KUBERNETES_SERVICE_HOST=")
	t.Cleanup(func() { n.cleanup() })
	return n
}

// Driver is a running driver process.
type Driver struct {
	cmd  *exec.Cmd
	logs *SyncBuffer
	Conn *grpc.ClientConn
}

// Start runs the driver binary in mode ("node" or "all") and waits until NodeGetInfo answers (Probe is ready as
// soon as the socket serves; the node's identity comes a moment later).
func (n *Node) Start(t *testing.T, bin, mode string, extra ...string) *Driver {
	t.Helper()
	logs := &SyncBuffer{}
	cmd := exec.Command(bin, append(append([]string{"--mode=" + mode}, n.Args...), extra...)...)
	cmd.Env = n.Env
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &Driver{cmd: cmd, logs: logs}
	t.Cleanup(func() {
		d.Stop()
		if t.Failed() {
			t.Logf("driver log (tail):\n%s", Tail(logs.String(), 6000))
		}
	})
	conn, err := grpc.NewClient("unix://"+n.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", n.Socket)
		}))
	if err != nil {
		t.Fatal(err)
	}
	d.Conn = conn
	node := csi.NewNodeClient(conn)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		resp, err := node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
		cancel()
		if err == nil {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("driver not serving after 60s (last NodeGetInfo: %v, %v)\n%s", resp, err, Tail(logs.String(), 6000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the driver with SIGTERM (as kubelet does) and waits for it.
func (d *Driver) Stop() {
	if d.cmd.ProcessState != nil {
		return
	}
	if d.Conn != nil {
		_ = d.Conn.Close()
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
}

// Logs returns the driver's output so far.
func (d *Driver) Logs() string { return d.logs.String() }

// Record is one call of the mount.nfs4 recorder.
type Record struct {
	Source     string `json:"source"`
	Mountpoint string `json:"mountpoint"`
	Options    string `json:"options"`
}

// Recorded returns the recorder's calls so far.
func (n *Node) Recorded(t *testing.T) []Record {
	t.Helper()
	b, err := os.ReadFile(n.RecorderLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// State is the part of an efs-utils state file the tests read.
type State struct {
	PID         int      `json:"pid"`
	FSID        string   `json:"fsId"`
	AccessPoint string   `json:"accessPoint"`
	Mountpoint  string   `json:"mountpoint"`
	Cmd         []string `json:"cmd"`
}

// States returns the efs-utils state files by name.
func (n *Node) States(t *testing.T) map[string]State {
	t.Helper()
	entries, _ := os.ReadDir(n.StateDir)
	out := map[string]State{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "fs-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(n.StateDir, e.Name()))
		if err != nil {
			continue
		}
		var s State
		if json.Unmarshal(b, &s) == nil {
			out[e.Name()] = s
		}
	}
	return out
}

// ForgetUnmounted drops the lines of mount points that are no longer mounted from the recorder's NFS mount table
// (the kernel would drop them itself; the watchdog reads this table).
func (n *Node) ForgetUnmounted(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(n.MountTable)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && IsMounted(f[1]) {
			keep = append(keep, line)
		}
	}
	out := strings.Join(keep, "\n")
	if out != "" {
		out += "\n"
	}
	if err := os.WriteFile(n.MountTable, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cleanup stops the relays the test left and unmounts what is still mounted under the node's directory.
func (n *Node) cleanup() {
	entries, _ := os.ReadDir(n.StateDir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(n.StateDir, e.Name()))
		if err != nil || e.IsDir() {
			continue
		}
		var s State
		if json.Unmarshal(b, &s) == nil && s.PID > 0 {
			_ = syscall.Kill(-s.PID, syscall.SIGKILL)
		}
	}
	for _, mp := range MountsUnder(n.Dir) {
		_ = exec.Command("umount", "-l", mp).Run()
	}
}

// IsMounted reports whether path is a mount point in /proc/self/mountinfo.
func IsMounted(path string) bool {
	for _, mp := range MountsUnder(path) {
		if mp == filepath.Clean(path) {
			return true
		}
	}
	return false
}

// MountsUnder lists mount points at or below dir from /proc/self/mountinfo, deepest first.
func MountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	dir = filepath.Clean(dir)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			out = append([]string{f[4]}, out...)
		}
	}
	return out
}
