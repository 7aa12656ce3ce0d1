package realnfs

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, row := range []struct{ path, want string }{
		{"/fs-1/ap", "nfs://127.0.0.1/fs-1/ap?version=4&nfsport=20490"},
		{"fs-1/a b", "nfs://127.0.0.1/fs-1/a%20b?version=4&nfsport=20490"},
		{"/fs-1/../x/", "nfs://127.0.0.1/x?version=4&nfsport=20490"},
	} {
		if got := URL("127.0.0.1", 20490, row.path); got != row.want {
			t.Errorf("URL(%q) = %s, want %s", row.path, got, row.want)
		}
	}
}

func TestParseListing(t *testing.T) {
	out := "drwxr-xr-x  2     0     0         4096 .\n" +
		"drwx------  3  1000  1000         4096 data dir\n" +
		"-rw-r--r--  1     0     0            6 f.txt\n"
	got, err := parseListing(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Name: "data dir", Dir: true}, {Name: "f.txt"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseListing = %+v, want %+v", got, want)
	}
	if _, err := parseListing("Failed to mount nfs share\n"); err == nil || !strings.Contains(err.Error(), "MODE NLINK") {
		t.Errorf("parseListing of an error message: err = %v, want one naming the expected form", err)
	}
	if got, err := parseListing(""); err != nil || len(got) != 0 {
		t.Errorf("parseListing of an empty directory = %v, %v", got, err)
	}
}

// TestServerListsTheExport starts nfs-ganesha on a directory and lists it with libnfs over NFSv4: what a file
// created after the start shows, that a subdirectory is reached by its path below the pseudo root, and that the
// server is gone after Stop.
func TestServerListsTheExport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nfs-ganesha")
	}
	export := t.TempDir()
	if err := os.MkdirAll(filepath.Join(export, "fs-1", "ap"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := StartServer(t.TempDir(), export)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			s.Stop()
		}
	})
	if err := os.WriteFile(filepath.Join(export, "fs-1", "ap", "f.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, portText, _ := net.SplitHostPort(s.Addr)
	port, _ := strconv.Atoi(portText)
	got, err := List(t.Context(), host, port, "/fs-1/ap")
	if err != nil {
		t.Fatalf("%v\nserver log:\n%s", err, s.Log())
	}
	if want := []Entry{{Name: "f.txt"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("listing of /fs-1/ap = %+v, want %+v", got, want)
	}
	got, err = List(t.Context(), host, port, "/fs-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Entry{{Name: "ap", Dir: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("listing of /fs-1 = %+v, want %+v", got, want)
	}
	if _, err := List(t.Context(), host, port, "/fs-1/missing"); err == nil {
		t.Error("listing a missing directory succeeded")
	}
	s.Stop()
	stopped = true
	if c, err := net.Dial("tcp", s.Addr); err == nil {
		c.Close()
		t.Errorf("%s still takes connections after Stop", s.Addr)
	}
}
