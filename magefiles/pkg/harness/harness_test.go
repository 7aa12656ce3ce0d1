package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHarness is a workspace whose testharness module's command prints its arguments and working directory, exits
// with the status its first argument names, and says when it is interrupted: enough to see what Run passes on.
func fakeHarness(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.work":            "go 1.26\n\nuse ./testharness\n",
		"testharness/go.mod": "module github.com/openshift/aws-efs-csi/testharness\n\ngo 1.26\n",
		"testharness/cmd/testharness/main.go": `package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	wd, _ := os.Getwd()
	fmt.Printf("args=%s wd=%s env=%s\n", strings.Join(os.Args[1:], ","), wd, os.Getenv("HARNESS_TEST_MARK"))
	switch os.Args[1] {
	case "fail":
		fmt.Fprintln(os.Stderr, "to-stderr")
		os.Exit(3)
	case "wait":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		fmt.Println("waiting")
		select {
		case <-sig:
			fmt.Println("interrupted, cleaning up")
		case <-time.After(time.Minute):
		}
	}
}
`,
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestRunBuildsTheHarnessAndRunsItAtTheRoot(t *testing.T) {
	root := fakeHarness(t)
	t.Setenv("HARNESS_TEST_MARK", "seen")
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), root, []string{"cluster", "up"}, &out, &errOut); err != nil {
		t.Fatalf("Run = %v; stderr %s", err, errOut.String())
	}
	if want := "args=cluster,up wd=" + root + " env=seen\n"; out.String() != want {
		t.Fatalf("harness printed %q; want %q", out.String(), want)
	}
	if _, err := os.Stat(Binary(root)); err != nil {
		t.Fatalf("the harness was not built into %s: %v", Binary(root), err)
	}

	out.Reset()
	err := Run(t.Context(), root, []string{"fail"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "testharness fail: exit status 3") {
		t.Fatalf("Run of a failing harness = %v; want the command and its status", err)
	}
	if !strings.Contains(errOut.String(), "to-stderr") {
		t.Fatalf("the harness's stderr was not streamed: %q", errOut.String())
	}
}

// Cancelling the context interrupts the harness itself, which then has time to clean up.
func TestRunInterruptsTheHarnessOnCancel(t *testing.T) {
	root := fakeHarness(t)
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, root, []string{"wait"}, out, out) }()
	for !strings.Contains(out.String(), "waiting") {
		select {
		case err := <-done:
			t.Fatalf("the harness ended before it was cancelled: %v; output %q", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if !strings.Contains(out.String(), "interrupted, cleaning up") {
		t.Fatalf("the harness was not interrupted; output %q", out.String())
	}
}

func TestRunNamesABuildFailure(t *testing.T) {
	root := fakeHarness(t)
	if err := os.Remove(filepath.Join(root, "testharness", "cmd", "testharness", "main.go")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Run(t.Context(), root, []string{"test"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "building the test harness") || !strings.Contains(err.Error(), Package) {
		t.Fatalf("Run without the harness's source = %v; want the build named", err)
	}
}

// syncBuffer is a bytes.Buffer that the harness's output goroutines and the test may use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
