// Package standintest runs the sidecar stand-ins in tests against real parts: it builds a stand-in, starts the
// real driver in node mode on a unix socket (through the driver's e2e harness), runs the stand-in as a process,
// and reads the sidecar containers of the operator's shipped manifests.
package standintest

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// ConnectingLog is what a stand-in run with --v=5 logs (csi-lib-utils' connection.Connect) when it starts waiting
// for the driver's socket: the event that proves it is waiting.
var ConnectingLog = regexp.MustCompile(`"Connecting" address=`)

// RedialBound is how long a test watches a stand-in that waits for a driver that is not there before asserting it
// neither served nor exited: csi-lib-utils redials a unix socket at least every second (gRPC backoff with MaxDelay
// 1 s), so 1.5 s after ConnectingLog covers a failed dial and a retry, by when a stand-in that did not wait would
// have served or exited.
const RedialBound = 1500 * time.Millisecond

// DriverName is the name the driver reports in GetPluginInfo.
const DriverName = "efs.csi.aws.com"

// Build compiles the stand-in in driver/test/standins/<dir> into a temporary directory and returns its path.
func Build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), dir)
	pkg := "./test/standins/" + dir
	module := filepath.Join(harness.Repo(t), "driver")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, pkg)
	cmd.Dir = module
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	readSources(t, module, pkg)
	return bin
}

// readSources reads the module's files that the binary of pkg is built from. go test caches a passing result
// keyed by the test binary and the files the test read; the test binary does not link the stand-in's serving code
// (nothing in it calls main), so without these reads a change to that code could replay a stale pass.
func readSources(t *testing.T, module, pkg string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps",
		"-f", `{{if .Module}}{{if .Module.Main}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}`, pkg)
	cmd.Dir = module
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	files := append(strings.Fields(string(out)), filepath.Join(module, "go.mod"), filepath.Join(module, "go.sum"))
	for _, f := range files {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// Driver prepares the real driver in node mode on a unix socket (Node.Socket), with fakeaws as its instance
// metadata, until the test ends. start builds it on first use, runs it and returns once its Probe says ready; it
// may be called again after the driver was stopped.
func Driver(t *testing.T) (node *harness.Node, start func() *harness.Driver) {
	t.Helper()
	dir := t.TempDir()
	aws, err := fakeaws.Start(fakeaws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = aws.Close() })
	ca, _, _ := harness.CA(t, dir, "fs-0123456789abcdef0")
	node = harness.NewNode(t, filepath.Join(dir, "node"), aws.URL(), ca)
	bin := ""
	return node, func() *harness.Driver {
		t.Helper()
		if bin == "" {
			bin = harness.BuildDriver(t, dir)
			readSources(t, filepath.Join(harness.Repo(t), "driver"), "./cmd/aws-efs-csi-driver")
		}
		return node.Start(t, bin, "node")
	}
}

// Process is a stand-in running as a child process.
type Process struct {
	cmd  *exec.Cmd
	logs *harness.SyncBuffer
	done chan struct{}
}

// Start runs bin with args until it exits or the test ends (then it gets SIGKILL); its output is kept for
// WaitLog and quoted when the test fails.
func Start(t *testing.T, bin string, args ...string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(bin, args...), logs: &harness.SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(bin), harness.Tail(p.logs.String(), 6000))
		}
	})
	return p
}

// WaitLog waits up to 30 s for a line of output matching re and returns its submatches.
func (p *Process) WaitLog(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.logs.String()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("process exited (%v) before logging %q", p.cmd.ProcessState, re)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no output matching %q after 30s", re)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Logs returns the output so far.
func (p *Process) Logs() string { return p.logs.String() }

// Signal sends sig to the process.
func (p *Process) Signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to 30 s for the process to exit and returns its exit code.
func (p *Process) Wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatal("process still running 30s later")
		return -1
	}
}

// assetPlaceholder is a ${NAME} the operator fills in; the tests fill every one with 2, a valid --v level.
var assetPlaceholder = regexp.MustCompile(`\$\{[A-Z_]+\}`)

// PodSpec reads the pod template of the operator's Deployment or DaemonSet asset (operator/assets/driver/<name>),
// placeholders filled.
func PodSpec(t *testing.T, name string) corev1.PodSpec {
	t.Helper()
	path := filepath.Join(harness.Repo(t), "operator", "assets", "driver", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var workload struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(assetPlaceholder.ReplaceAll(data, []byte("2")), &workload); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return workload.Spec.Template.Spec
}

// Container returns the container called name of spec.
func Container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("the pod template has no container %q", name)
	return corev1.Container{}
}

// Get fetches url and returns the status code and the body: the stand-ins' /healthz answers.
func Get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
