package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/efs"

	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
	"github.com/openshift/aws-efs-csi/driver/test/standins/internal/standintest"
)

// world is efs-standin running as a process, and an efs-utils installation (config, state, logs) using it with
// mount-nfs4-standin as mount.nfs4 and the shipped mount.efs as /sbin/mount.efs.
type world struct {
	dir, standin, mountNFS4 string
	proc                    *standintest.Process
	ready                   Ready
	env                     []string
	table                   string
}

func newWorld(t *testing.T, args ...string) *world {
	t.Helper()
	harness.RequireRoot(t)
	w := &world{dir: t.TempDir()}
	w.standin, w.mountNFS4 = binaries(t)
	w.start(t, args...)
	return w
}

// built holds the two programs, built once for the package's tests (TestMain removes them).
var built struct {
	sync.Mutex
	dir, standin, mountNFS4 string
}

// binaries builds efs-standin and mount-nfs4-standin on first use and returns their paths.
func binaries(t *testing.T) (standin, mountNFS4 string) {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		return built.standin, built.mountNFS4
	}
	dir, err := os.MkdirTemp("", "efs-standin-bin-")
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 2)
	for i, name := range []string{"efs-standin", "mount-nfs4-standin"} {
		b, err := os.ReadFile(standintest.Build(t, name))
		if err != nil {
			t.Fatal(err)
		}
		paths[i] = filepath.Join(dir, name)
		if err := os.WriteFile(paths[i], b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	built.dir, built.standin, built.mountNFS4 = dir, paths[0], paths[1]
	return built.standin, built.mountNFS4
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// start runs efs-standin and waits for its ready file.
func (w *world) start(t *testing.T, args ...string) {
	t.Helper()
	dir := filepath.Join(w.dir, "standin")
	w.proc = standintest.Start(t, w.standin, append([]string{"--dir", dir}, args...)...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "ready.json"))
		if err == nil {
			if err := json.Unmarshal(b, &w.ready); err != nil {
				t.Fatalf("ready file: %v\n%s", err, b)
			}
			break
		}
		if w.proc.Exited() || time.Now().After(deadline) {
			t.Fatalf("no ready file (exited: %v)\n%s", w.proc.Exited(), w.proc.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		if !w.proc.Exited() {
			w.proc.Signal(t, syscall.SIGTERM)
			w.proc.Wait(t)
		}
	})
}

// node lays out an efs-utils installation under the world's directory and installs mount.efs.
func (w *world) node(t *testing.T) {
	t.Helper()
	harness.InstallMountHelper(t)
	n := filepath.Join(w.dir, "node")
	for _, d := range []string{"state", "log"} {
		if err := os.MkdirAll(filepath.Join(n, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dist, err := os.ReadFile(filepath.Join(harness.Repo(t), "efs-utils", "dist", "efs-utils.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(dist)
	for old, repl := range map[string]string{"#region = us-east-1": "region = " + w.ready.Region,
		"stunnel_cafile = /etc/amazon/efs/efs-utils.crt": "stunnel_cafile = " + w.ready.CAFile,
		"optimize_readahead = true":                      "optimize_readahead = false"} {
		if !strings.Contains(conf, old) {
			t.Fatalf("efs-utils.conf has no %q", old)
		}
		conf = strings.Replace(conf, old, repl, 1)
	}
	if err := os.WriteFile(filepath.Join(n, "efs-utils.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	w.table = filepath.Join(n, "nfs-mounts")
	w.env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"EFS_UTILS_CONFIG_FILE="+filepath.Join(n, "efs-utils.conf"), "EFS_UTILS_STATE_DIR="+filepath.Join(n, "state"),
		"EFS_UTILS_LOG_DIR="+filepath.Join(n, "log"), "EFS_UTILS_PRIVATE_KEY="+filepath.Join(n, "privateKey.pem"),
		"EFS_UTILS_STUNNEL="+harness.Stunnel, "EFS_UTILS_MOUNT_NFS4="+w.mountNFS4, "EFS_UTILS_PROC_MOUNTS="+w.table,
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:9", "PYTHONDONTWRITEBYTECODE=1")
	t.Cleanup(func() { w.cleanupNode(n) })
}

// cleanupNode stops relays the test left and unmounts what is still mounted under the node.
func (w *world) cleanupNode(n string) {
	killRelays(filepath.Join(n, "state"))
	for _, mp := range harness.MountsUnder(w.dir) {
		_ = osexec.Command("umount", "-l", mp).Run()
	}
}

// cleanupRelays kills the node's TLS relays (the state files' stunnel processes) and waits for them to go.
func (w *world) cleanupRelays(t *testing.T) {
	t.Helper()
	for _, pid := range killRelays(filepath.Join(w.dir, "node", "state")) {
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// killRelays sends SIGKILL to the process group of each state file's relay and returns their process IDs.
func killRelays(stateDir string) []int {
	var pids []int
	entries, _ := os.ReadDir(stateDir)
	for _, e := range entries {
		var st struct{ PID int }
		if b, err := os.ReadFile(filepath.Join(stateDir, e.Name())); err == nil && json.Unmarshal(b, &st) == nil && st.PID > 0 {
			_ = syscall.Kill(-st.PID, syscall.SIGKILL)
			pids = append(pids, st.PID)
		}
	}
	return pids
}

// fs returns the seeded file system with that ID.
func (w *world) fs(t *testing.T, id string) ReadyFileSystem {
	t.Helper()
	for _, f := range w.ready.FileSystems {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no file system %s in %+v", id, w.ready)
	return ReadyFileSystem{}
}

// mount runs mount(8) -t efs with TLS through the file system's first mount target.
func (w *world) mount(t *testing.T, fsID, spec, target string, extra ...string) (string, error) {
	t.Helper()
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := append([]string{"tls", "mounttargetip=" + w.fs(t, fsID).MountTargets[0].IP}, extra...)
	cmd := osexec.CommandContext(t.Context(), "mount", "-t", "efs", "-o", strings.Join(opts, ","), spec, target)
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tableLines returns the NFS mount table's lines.
func (w *world) tableLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(w.table)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// waitTable waits until the mount table has n lines (the backend updates it within its sync interval).
func (w *world) waitTable(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := w.tableLines(t)
		if len(lines) == n {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("mount table has %d lines, want %d: %q", len(lines), n, lines)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// efsClient is an aws-sdk-go-v2 EFS client for the stand-in's HTTPS endpoint, trusting its CA.
func (w *world) efsClient(t *testing.T) *efs.Client {
	t.Helper()
	pem, err := os.ReadFile(w.ready.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("CA file holds no certificate")
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return efs.New(efs.Options{Region: w.ready.Region, BaseEndpoint: aws.String(w.ready.AWSEndpoint), HTTPClient: hc,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSTANDIN", "secret", "")})
}

// calls reads the call counts from the control endpoint.
func (w *world) calls(t *testing.T) map[string]int {
	t.Helper()
	return w.counts(t, "/calls")
}

// counts reads a map of counts from the control endpoint's path.
func (w *world) counts(t *testing.T, path string) map[string]int {
	t.Helper()
	resp, err := http.Get(w.ready.ControlURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// exec runs a command with env and returns its combined output.
func exec(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := osexec.CommandContext(t.Context(), name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}
