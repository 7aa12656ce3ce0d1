package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openshift/aws-efs-csi/driver/pkg/rootdir"
	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
	"github.com/openshift/aws-efs-csi/driver/test/mounttarget"
)

// TestControllerDeletesRootDirectory runs the controller's --delete-access-point-root-dir code (rootdir.Deleter
// with mount(8) and umount(8)) against the stand-in: it mounts the file system root through TLS, removes the
// access point's root directory, and the directory is gone from the backing store; its sibling is untouched.
func TestControllerDeletesRootDirectory(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	fs := w.fs(t, w.ready.RegionalFileSystemID)
	for _, d := range []string{"dynamic/pvc-1/deep", "dynamic/pvc-2"} {
		if err := os.MkdirAll(filepath.Join(fs.BackingDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range w.env[len(os.Environ()):] {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	d := rootdir.Deleter{Mounter: rootdir.ExecMounter{}, WorkDir: filepath.Join(w.dir, "csi-pv")}
	err := d.Delete(t.Context(), rootdir.Target{FileSystemID: fs.ID, AccessPointID: "fsap-0123456789abcdef0",
		RootDir: "/dynamic/pvc-1", MountOptions: []string{"tls", "mounttargetip=" + fs.MountTargets[0].IP}})
	if err != nil {
		t.Fatalf("Delete: %v\n%s", err, w.proc.Logs())
	}
	if _, err := os.Stat(filepath.Join(fs.BackingDir, "dynamic", "pvc-1")); !os.IsNotExist(err) {
		t.Fatalf("root directory still in the backing store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fs.BackingDir, "dynamic", "pvc-2")); err != nil {
		t.Fatalf("sibling directory: %v", err)
	}
	if mps := harness.MountsUnder(w.dir); len(mps) != 0 {
		t.Fatalf("mounts left: %v", mps)
	}
	w.waitTable(t, 0)
}

// TestMountInPrivateNamespace: a mount made from another mount namespace (a container's, here one made by
// unshare(1) with private propagation) is made in that namespace, not on the host, and its table entry goes
// once that namespace is gone.
func TestMountInPrivateNamespace(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	fs := w.fs(t, w.ready.RegionalFileSystemID)
	if err := os.MkdirAll(filepath.Join(fs.BackingDir, "victim", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(w.dir, "private")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	// unshare(1) execs sh in the new namespace, so sh's parent is this test: /proc/$PPID is the host's namespace
	script := `set -e
mount -t efs -o tls,mounttargetip=` + fs.MountTargets[0].IP + ` ` + fs.ID + `:/ "$1"
grep -q " $1 " /proc/self/mountinfo && echo mounted-here
grep -c " $1 " /proc/$PPID/mountinfo || true
rm -r "$1/victim"
umount "$1"`
	out, err := exec(t, w.env, "unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", target)
	if err != nil {
		t.Fatalf("unshare: %v\n%s\n%s", err, out, w.proc.Logs())
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || lines[0] != "mounted-here" || lines[1] != "0" {
		t.Fatalf("output %q: want the mount in the private namespace only", out)
	}
	if _, err := os.Stat(filepath.Join(fs.BackingDir, "victim")); !os.IsNotExist(err) {
		t.Fatalf("removal in the private namespace did not reach the backing store: %v", err)
	}
	w.waitTable(t, 0)
}

// TestNoBackendTrafficNoMount: when the relay reaches a TLS server whose backend does not answer, the stand-in
// mounts nothing and mount.efs fails with mount.nfs4's error (after its retries on "reset by peer").
func TestNoBackendTrafficNoMount(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	fs := w.fs(t, w.ready.RegionalFileSystemID)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	_ = dead.Close()
	ip, err := mounttarget.FreeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := mounttarget.CA{CAFile: w.ready.CAFile, CertFile: filepath.Join(w.dir, "standin", "server.pem"), KeyFile: filepath.Join(w.dir, "standin", "server.key")}
	st, err := mounttarget.StartStunnel(dir, ca, []mounttarget.Service{{Name: "dead", Accept: net.JoinHostPort(ip, "2049"), Connect: deadAddr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	target := filepath.Join(w.dir, "nothing")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := []string{"-t", "efs", "-o", "tls,mounttargetip=" + ip, fs.ID + ":/", target}
	out, err := exec(t, w.env, "mount", cmd...)
	if err == nil || !strings.Contains(out, "reset by peer") {
		t.Fatalf("mount through a dead backend: %v\n%s", err, out)
	}
	if harness.IsMounted(target) {
		t.Fatal("mounted although nothing answered behind the TLS server")
	}
	if lines := w.tableLines(t); len(lines) != 0 {
		t.Fatalf("mount table %q", lines)
	}
}

// TestMountPropagatesFromSharedMount: a mount made on a shared mount (the kubelet directory, mounted Bidirectional
// into the node container) propagates to its peers (the host's view and the application pods'), and so does its
// unmount.
func TestMountPropagatesFromSharedMount(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	fs := w.fs(t, w.ready.RegionalFileSystemID)
	shared, peer := filepath.Join(w.dir, "kubelet"), filepath.Join(w.dir, "kubelet-peer")
	for _, d := range []string{filepath.Join(shared, "pod", "mount"), peer} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"--bind", shared, shared}, {"--make-rshared", shared}, {"--bind", shared, peer}} {
		if out, err := exec(t, nil, "mount", args...); err != nil {
			t.Fatalf("mount %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(fs.BackingDir, "seen"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(shared, "pod", "mount")
	if out, err := w.mount(t, fs.ID, fs.ID+":/", target); err != nil {
		t.Fatalf("mount on a shared mount: %v\n%s\n%s", err, out, w.proc.Logs())
	}
	if _, err := os.Stat(filepath.Join(peer, "pod", "mount", "seen")); err != nil {
		t.Fatalf("mount did not propagate to the peer: %v", err)
	}
	if out, err := exec(t, w.env, "umount", target); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	if harness.IsMounted(filepath.Join(peer, "pod", "mount")) {
		t.Fatal("unmount did not propagate to the peer")
	}
	w.waitTable(t, 0)
}

// TestTableOutlivesNamespace: a mount made from a namespace that then ends entirely (a node container that is
// killed, its relay with it) stays in the NFS mount table as long as it is still mounted where the table is
// read (it propagated through the shared kubelet directory), and leaves it once unmounted there; when the program
// stops, it takes such a left-over copy off the host.
func TestTableOutlivesNamespace(t *testing.T) {
	w := newWorld(t)
	w.node(t)
	fs := w.fs(t, w.ready.RegionalFileSystemID)
	shared := filepath.Join(w.dir, "kubelet")
	target := filepath.Join(shared, "pod", "mount")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--bind", shared, shared}, {"--make-rshared", shared}} {
		if out, err := exec(t, nil, "mount", args...); err != nil {
			t.Fatalf("mount %v: %v\n%s", args, err, out)
		}
	}
	script := `mount -t efs -o tls,mounttargetip=` + fs.MountTargets[0].IP + ` ` + fs.ID + `:/ "$1"`
	if out, err := exec(t, w.env, "unshare", "--mount", "--propagation", "unchanged", "--", "sh", "-c", script, "sh", target); err != nil {
		t.Fatalf("mount from another namespace: %v\n%s\n%s", err, out, w.proc.Logs())
	}
	if !harness.IsMounted(target) {
		t.Fatal("the mount did not propagate to the host")
	}
	w.cleanupRelays(t) // the relay was the last process of that namespace
	// The table is synced periodically: wait for the takeover rather than for a fixed time (a loaded machine,
	// as in CI, is slower than a second).
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(w.proc.Logs(), "Mount table taken over by another mount namespace"); {
		if time.Now().After(deadline) {
			t.Fatalf("the table was not taken over from the ended namespace within 30s:\n%s", w.proc.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lines := w.waitTable(t, 1); !strings.Contains(lines[0], target) {
		t.Fatalf("table %q", lines)
	}
	// a second one, unmounted by hand: its line goes
	second := filepath.Join(shared, "pod2", "mount")
	if err := os.MkdirAll(second, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := w.mount(t, fs.ID, fs.ID+":/", second); err != nil {
		t.Fatalf("mount: %v\n%s", err, out)
	}
	w.waitTable(t, 2)
	if out, err := exec(t, nil, "umount", second); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	w.waitTable(t, 1)
	w.proc.Signal(t, syscall.SIGTERM)
	if code := w.proc.Wait(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, w.proc.Logs())
	}
	if harness.IsMounted(target) {
		t.Fatal("the copy of a mount whose namespace ended is still mounted after the program stopped")
	}
	w.waitTable(t, 0)
}

// TestControllerDeletesRootDirectoryAsInCluster: the controller's deletion with the options it uses in the
// cluster (tls,iam, no mount target address: efs-utils finds it through botocore at the HTTPS endpoint) and IAM
// credentials for the mount's certificate from a web identity (efs-utils' own AssumeRoleWithWebIdentity at the
// HTTPS endpoint, trusted through SSL_CERT_FILE), as a pod without instance metadata gets them. botocore gets
// static keys from the environment: with only the web identity, Debian's botocore (1.43) asks the global STS
// endpoint, ignoring AWS_ENDPOINT_URL_STS, and the fallback fails.
func TestControllerDeletesRootDirectoryAsInCluster(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/efs-csi-controller"
	w := newWorld(t, "--role", role)
	w.node(t)
	fs := w.fs(t, w.ready.RegionalFileSystemID)
	if err := os.MkdirAll(filepath.Join(fs.BackingDir, "dynamic", "pvc-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(w.dir, "token")
	if err := os.WriteFile(token, []byte("service-account-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "AWS_ENDPOINT_URL_EFS="+w.ready.AWSEndpoint, "AWS_ENDPOINT_URL_EC2="+w.ready.AWSEndpoint,
		"AWS_ENDPOINT_URL_STS="+w.ready.AWSEndpoint, "AWS_CA_BUNDLE="+w.ready.CAFile, "SSL_CERT_FILE="+w.ready.CAFile,
		"AWS_ROLE_ARN="+role, "AWS_WEB_IDENTITY_TOKEN_FILE="+token, "HOME="+w.dir,
		"AWS_ACCESS_KEY_ID=AKIDSTANDIN", "AWS_SECRET_ACCESS_KEY=secret")
	for _, kv := range w.env[len(os.Environ()):] {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	d := rootdir.Deleter{Mounter: rootdir.ExecMounter{}, WorkDir: filepath.Join(w.dir, "csi-pv")}
	if err := d.Delete(t.Context(), rootdir.Target{FileSystemID: fs.ID, AccessPointID: "fsap-0123456789abcdef0",
		RootDir: "/dynamic/pvc-1", MountOptions: []string{"tls", "iam"}}); err != nil {
		t.Fatalf("Delete: %v\n%s", err, w.proc.Logs())
	}
	if _, err := os.Stat(filepath.Join(fs.BackingDir, "dynamic", "pvc-1")); !os.IsNotExist(err) {
		t.Fatalf("root directory still in the backing store: %v", err)
	}
	if calls := w.calls(t); calls["AssumeRoleWithWebIdentity"] == 0 || calls["DescribeMountTargets"] == 0 {
		t.Fatalf("calls %v: want the web identity exchange and the mount target lookup", calls)
	}
}
