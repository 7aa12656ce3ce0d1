package nfsbackend

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/driver/test/realnfs"
)

// TestServerResolvesAndRelaysNFS: with a real NFS server behind it (nfs-ganesha), the backend answers a resolve
// request with the access point's directory, created with its CreationInfo as a first mount would, and its path
// on the NFS server, without mounting anything; an NFS client's connection to the backend's port reaches the
// NFS server, which lists that directory. Without an NFS server, NFS connections are closed and answers carry no
// NFS path.
func TestServerResolvesAndRelaysNFS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nfs-ganesha")
	}
	dir := t.TempDir()
	backing := filepath.Join(dir, "backing")
	if err := os.MkdirAll(backing, 0o755); err != nil {
		t.Fatal(err)
	}
	nfs, err := realnfs.StartServer(t.TempDir(), backing)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nfs.Stop)
	ap := AccessPoint{ID: "fsap-1", FileSystemID: "fs-1", RootDir: "/apps/one", Creation: &CreationInfo{UID: 1000, GID: 1000, Permissions: 0o750}}
	aps := func(id string) (AccessPoint, bool) { return ap, id == ap.ID }
	cert := string(clientCert(t, map[string]string{"fs": "fs-1", "ap": "fsap-1"}))

	for _, withNFS := range []bool{true, false} {
		s := &Server{BackingDir: backing, AccessPoints: aps, SyncInterval: 50 * time.Millisecond}
		if withNFS {
			s.NFSServer = nfs.Addr
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(t.Context()) })
		addr, err := s.Listen("fs-1")
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "mnt")
		resp := request(t, addr, Request{Export: "/", Target: target, MountNamespace: 1, Certificate: cert, Resolve: true})
		want := Response{Served: "/apps/one"}
		if withNFS {
			want.NFSPath = "/fs-1/apps/one"
		}
		if resp != want {
			t.Fatalf("resolve (NFS server %t): %+v, want %+v", withNFS, resp, want)
		}
		st, err := os.Stat(filepath.Join(backing, "fs-1", "apps", "one"))
		if err != nil || st.Mode().Perm() != 0o750 {
			t.Fatalf("access point root after resolve: %v, %v; want a directory with mode 0750", st, err)
		}
		if n := s.Mounts()["fs-1"]; n != 0 {
			t.Errorf("%d mounts after a resolve request, want none", n)
		}
		if err := os.WriteFile(filepath.Join(backing, "fs-1", "apps", "one", "data"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		host, portText, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(portText)
		got, err := realnfs.List(t.Context(), host, port, "/fs-1/apps/one")
		switch {
		case withNFS && err != nil:
			t.Fatalf("NFS listing through the backend: %v\nNFS server log:\n%s", err, nfs.Log())
		case withNFS && !reflect.DeepEqual(got, []realnfs.Entry{{Name: "data"}}):
			t.Errorf("NFS listing through the backend: %+v, want the file data", got)
		case !withNFS && err == nil:
			t.Errorf("NFS listing through a backend without an NFS server succeeded: %+v", got)
		}
		if n := s.NFSConnections()["fs-1"]; withNFS && n != 1 || !withNFS && n != 0 {
			t.Errorf("NFSConnections()[fs-1] = %d after one listing (NFS server %t)", n, withNFS)
		}
	}
}
