package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	efstypes "github.com/aws/aws-sdk-go-v2/service/efs/types"

	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
)

// TestStartReadyStop: the program serves what the ready file says (fakeaws over HTTPS trusted through the CA,
// with the two file systems and loopback mount targets whose TLS servers answer; call counts on the control
// endpoint; a CA made earlier with --init-ca signs the certificates) and SIGTERM leaves nothing behind: exit 0,
// no ready file, nothing on the mount target addresses.
func TestStartReadyStop(t *testing.T) {
	caDir := t.TempDir()
	if err := run([]string{"--init-ca", "--ca-dir", caDir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, "--ca-dir", caDir, "--aws-latency", "1ms")
	r := w.ready
	if r.CAFile != filepath.Join(caDir, "ca.pem") {
		t.Fatalf("ready caFile %q, want the CA of --ca-dir", r.CAFile)
	}
	if !strings.HasPrefix(r.AWSEndpoint, "https://127.0.0.1:") || r.RegionalFileSystemID == "" || r.OneZoneFileSystemID == "" || len(r.FileSystems) != 2 {
		t.Fatalf("ready = %+v", r)
	}
	out, err := w.efsClient(t).DescribeFileSystems(t.Context(), &efs.DescribeFileSystemsInput{})
	if err != nil {
		t.Fatalf("DescribeFileSystems over HTTPS with the CA: %v", err)
	}
	zones := map[string]string{}
	for _, fs := range out.FileSystems {
		zones[aws.ToString(fs.FileSystemId)] = aws.ToString(fs.AvailabilityZoneName)
	}
	if len(zones) != 2 || zones[r.RegionalFileSystemID] != "" || zones[r.OneZoneFileSystemID] == "" {
		t.Fatalf("file systems %v: want one regional and one One Zone", zones)
	}
	mts, err := w.efsClient(t).DescribeMountTargets(t.Context(), &efs.DescribeMountTargetsInput{FileSystemId: aws.String(r.RegionalFileSystemID)})
	if err != nil || len(mts.MountTargets) != len(w.fs(t, r.RegionalFileSystemID).MountTargets) {
		t.Fatalf("DescribeMountTargets: %v, %v", mts, err)
	}
	var addrs []string
	for _, f := range r.FileSystems {
		if st, err := os.Stat(f.BackingDir); err != nil || !st.IsDir() {
			t.Fatalf("backing directory of %s: %v", f.ID, err)
		}
		for _, mt := range f.MountTargets {
			if !strings.HasPrefix(mt.IP, "127.") {
				t.Fatalf("mount target %+v is not on loopback", mt)
			}
			addrs = append(addrs, net.JoinHostPort(mt.IP, "2049"))
		}
	}
	for _, a := range addrs {
		c, err := net.DialTimeout("tcp", a, time.Second)
		if err != nil {
			t.Fatalf("mount target %s: %v", a, err)
		}
		_ = c.Close()
	}
	if got := w.calls(t); got["DescribeFileSystems"] != 1 || got["DescribeMountTargets"] != 1 {
		t.Fatalf("calls = %v", got)
	}

	w.proc.Signal(t, syscall.SIGTERM)
	if code := w.proc.Wait(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, w.proc.Logs())
	}
	if _, err := os.Stat(filepath.Join(w.dir, "standin", "ready.json")); !os.IsNotExist(err) {
		t.Fatalf("ready file left behind: %v", err)
	}
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = c.Close()
			t.Fatalf("%s still accepts connections after exit: stunnel left running", a)
		}
	}
}

// TestFaultsChangeWhileRunning: POST /faults sets fakeaws latency on a running stand-in and a zero spec clears it;
// a malformed spec is refused with fakeaws' message and changes nothing.
func TestFaultsChangeWhileRunning(t *testing.T) {
	w := newWorld(t)
	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(w.ready.ControlURL+"/faults", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	timed := func() time.Duration {
		t.Helper()
		start := time.Now()
		if _, err := w.efsClient(t).DescribeFileSystems(t.Context(), &efs.DescribeFileSystemsInput{}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	if code, msg := post("*:latency=300ms\nCreateAccessPoint:error-probability=0"); code != http.StatusNoContent {
		t.Fatalf("POST /faults = %d %s", code, msg)
	}
	if d := timed(); d < 300*time.Millisecond {
		t.Fatalf("DescribeFileSystems took %s with 300ms latency set", d)
	}
	if code, msg := post("*:latency=sometimes"); code != http.StatusBadRequest || !strings.Contains(msg, "latency") {
		t.Fatalf("POST /faults with a bad spec = %d %q, want 400 naming latency", code, msg)
	}
	if code, msg := post("*:latency=0s"); code != http.StatusNoContent {
		t.Fatalf("POST /faults clearing = %d %s", code, msg)
	}
	if d := timed(); d >= 300*time.Millisecond {
		t.Fatalf("DescribeFileSystems took %s after the latency was cleared", d)
	}
}

// TestMountThroughTLS: mount(8) -t efs -o tls → mount.efs → stunnel relay → mount target TLS server → backend;
// the target shows the file system's backing directory both ways, the NFS mount table has the nfs4 line through
// the relay, umount(8) unmounts and the line goes; a second mount reuses nothing stale.
// Before mounting, the mount.nfs4 stand-in listed the directory over NFSv4 through the same relay: the NFS
// connection reached the real NFS server (nfs-ganesha) behind the mount target.
func TestMountThroughTLS(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	fs := w.fs(t, w.ready.RegionalFileSystemID)
	if err := os.WriteFile(filepath.Join(fs.BackingDir, "from-backing"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(w.dir, "mnt")
	if out, err := w.mount(t, fs.ID, fs.ID+":/", target); err != nil {
		t.Fatalf("mount: %v\n%s\n%s", err, out, w.proc.Logs())
	}
	if !harness.IsMounted(target) {
		t.Fatal("target is not a mount point")
	}
	if w.ready.NFSServer == "" {
		t.Fatal("the ready document names no NFS server: efs-standin runs nfs-ganesha by default")
	}
	if n := w.counts(t, "/nfs-connections")[fs.ID]; n != 1 {
		t.Errorf("NFS connections relayed for %s after one mount: %d, want 1 (the stand-in's listing through the relay)", fs.ID, n)
	}
	if b, err := os.ReadFile(filepath.Join(target, "from-backing")); err != nil || string(b) != "b" {
		t.Fatalf("file from the backing directory through the mount: %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(target, "from-client"), []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(fs.BackingDir, "from-client")); err != nil || string(b) != "c" {
		t.Fatalf("file written through the mount, in the backing directory: %q, %v", b, err)
	}
	lines := w.waitTable(t, 1)
	f := strings.Fields(lines[0])
	if len(f) != 6 || f[0] != "127.0.0.1:/" || f[1] != target || f[2] != "nfs4" || !strings.Contains(f[3], "port=") {
		t.Fatalf("mount table line %q", lines[0])
	}
	if out, err := exec(t, w.env, "umount", target); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	if harness.IsMounted(target) {
		t.Fatal("still mounted after umount")
	}
	w.waitTable(t, 0)
	if _, err := os.Stat(filepath.Join(fs.BackingDir, "from-client")); err != nil {
		t.Fatalf("data lost after umount: %v", err)
	}
}

// TestAccessPointRootDirectory: a mount with accesspoint= serves the access point's root directory, created on
// the first mount with the CreationInfo owner and permissions (the backend reads the access point from the client
// certificate efs-utils made); a sub-path below it must exist; an access point of another file system is refused.
func TestAccessPointRootDirectory(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	fs := w.fs(t, w.ready.OneZoneFileSystemID)
	c := w.efsClient(t)
	ap, err := c.CreateAccessPoint(t.Context(), &efs.CreateAccessPointInput{ClientToken: aws.String("pvc-1"), FileSystemId: aws.String(fs.ID),
		PosixUser: &efstypes.PosixUser{Uid: aws.Int64(1001), Gid: aws.Int64(1002)},
		RootDirectory: &efstypes.RootDirectory{Path: aws.String("/dynamic/pvc-1"),
			CreationInfo: &efstypes.CreationInfo{OwnerUid: aws.Int64(1001), OwnerGid: aws.Int64(1002), Permissions: aws.String("2750")}}})
	if err != nil {
		t.Fatal(err)
	}
	apID := aws.ToString(ap.AccessPointId)
	if _, err := os.Stat(filepath.Join(fs.BackingDir, "dynamic")); !os.IsNotExist(err) {
		t.Fatalf("root directory exists before the first mount: %v", err)
	}
	target := filepath.Join(w.dir, "ap")
	if out, err := w.mount(t, fs.ID, fs.ID+":/", target, "accesspoint="+apID); err != nil {
		t.Fatalf("mount: %v\n%s\n%s", err, out, w.proc.Logs())
	}
	root := filepath.Join(fs.BackingDir, "dynamic", "pvc-1")
	st, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Uid != 1001 || sys.Gid != 1002 || sys.Mode&0o7777 != 0o2750 {
		t.Fatalf("root directory owner %d:%d mode %o, want 1001:1002 2750", sys.Uid, sys.Gid, sys.Mode&0o7777)
	}
	if err := os.WriteFile(filepath.Join(target, "data"), []byte("d"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "data")); err != nil {
		t.Fatalf("write through the access point mount is not in its root directory: %v", err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	subTarget := filepath.Join(w.dir, "ap-sub")
	if out, err := w.mount(t, fs.ID, fs.ID+":/sub", subTarget, "accesspoint="+apID); err != nil {
		t.Fatalf("mount of a sub-path: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(subTarget, "s"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "sub", "s")); err != nil {
		t.Fatalf("sub-path mount does not serve <root>/sub: %v", err)
	}
	if out, err := w.mount(t, fs.ID, fs.ID+":/missing", filepath.Join(w.dir, "ap-missing"), "accesspoint="+apID); err == nil ||
		!strings.Contains(out, "no such file or directory") {
		t.Fatalf("mount of a missing sub-path: %v\n%s", err, out)
	}
	// an access point of the regional file system through the One Zone file system's mount target
	other, err := c.CreateAccessPoint(t.Context(), &efs.CreateAccessPointInput{ClientToken: aws.String("other"),
		FileSystemId: aws.String(w.ready.RegionalFileSystemID), RootDirectory: &efstypes.RootDirectory{Path: aws.String("/x")}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := w.mount(t, fs.ID, fs.ID+":/", filepath.Join(w.dir, "ap-other"), "accesspoint="+aws.ToString(other.AccessPointId)); err == nil ||
		!strings.Contains(out, "access denied") {
		t.Fatalf("mount with another file system's access point: %v\n%s", err, out)
	}
}

// TestMountNeedsTheNFSServer: with the NFS server behind the mount target gone, the mount.nfs4 stand-in's NFS
// listing through the relay fails, so nothing is mounted (efs-utils retries it as a reset connection, then gives
// up with the stand-in's message); with --nfs-server=none there is no NFS server to ask, and the mount is made
// without NFS traffic.
func TestMountNeedsTheNFSServer(t *testing.T) {
	t.Run("server gone", func(t *testing.T) {
		w := newWorld(t)
		w.node(t)
		fs := w.fs(t, w.ready.RegionalFileSystemID)
		pid, err := os.ReadFile(filepath.Join(w.dir, "standin", "ganesha.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec(t, w.env, "kill", "-KILL", strings.TrimSpace(string(pid))); err != nil {
			t.Fatalf("stopping nfs-ganesha: %v %s", err, out)
		}
		target := filepath.Join(w.dir, "mnt")
		out, err := w.mount(t, fs.ID, fs.ID+":/", target)
		if err == nil || !strings.Contains(out, "NFS through") {
			t.Fatalf("mount without the NFS server: %v, want the stand-in's NFS failure\n%s", err, out)
		}
		if harness.IsMounted(target) {
			t.Fatal("mounted although the NFS server did not answer")
		}
		if lines := w.tableLines(t); len(lines) != 0 {
			t.Fatalf("mount table %q", lines)
		}
	})
	t.Run("none", func(t *testing.T) {
		w := newWorld(t, "--nfs-server=none")
		w.node(t)
		fs := w.fs(t, w.ready.RegionalFileSystemID)
		target := filepath.Join(w.dir, "mnt")
		if out, err := w.mount(t, fs.ID, fs.ID+":/", target); err != nil {
			t.Fatalf("mount: %v\n%s", err, out)
		}
		if !harness.IsMounted(target) {
			t.Fatal("target is not a mount point")
		}
		if w.ready.NFSServer != "" {
			t.Errorf("ready document names NFS server %q with --nfs-server=none", w.ready.NFSServer)
		}
		if got := w.counts(t, "/nfs-connections"); len(got) != 0 {
			t.Errorf("NFS connections %v with --nfs-server=none, want none", got)
		}
	})
}
