package e2e

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

const (
	fsA = "fs-0a1b2c3d4e5f60718"
	fsB = "fs-0b1b2c3d4e5f60718"
	apA = "fsap-0123456789abcdef0"
)

type world struct {
	node   *harness.Node
	bin    string
	target *harness.MountTarget
	aws    *fakeaws.Server
}

func setup(t *testing.T) *world {
	t.Helper()
	harness.RequireRoot(t)
	harness.InstallMountHelper(t)
	dir := t.TempDir()
	aws, err := fakeaws.Start(fakeaws.Options{InstanceZone: "us-east-1b", InstanceID: "i-0e2e0e2e0e2e0e2e0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = aws.Close() })
	ca, cert, key := harness.CA(t, dir, fsA, fsB)
	w := &world{aws: aws, bin: harness.BuildDriver(t, dir)}
	w.target = harness.StartMountTarget(t, dir, cert, key)
	w.node = harness.NewNode(t, filepath.Join(dir, "node"), aws.URL(), ca)
	return w
}

func rwx(flags ...string) *csi.VolumeCapability {
	return &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{MountFlags: flags}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}
}

func (w *world) publish(t *testing.T, n csi.NodeClient, volumeID, target string, ro bool, attrs map[string]string) error {
	t.Helper()
	if attrs == nil {
		attrs = map[string]string{}
	}
	if _, ok := attrs["mounttargetip"]; !ok {
		attrs["mounttargetip"] = w.target.IP
	}
	_, err := n.NodePublishVolume(t.Context(), &csi.NodePublishVolumeRequest{VolumeId: volumeID, TargetPath: target,
		VolumeCapability: rwx(), Readonly: ro, VolumeContext: attrs})
	return err
}

func relayPort(t *testing.T, rec harness.Record) string {
	t.Helper()
	for _, o := range strings.Split(rec.Options, ",") {
		if p, ok := strings.CutPrefix(o, "port="); ok {
			return p
		}
	}
	t.Fatalf("recorded mount has no relay port: %+v", rec)
	return ""
}

// roundTrip sends a line through the TLS relay to the mount target stand-in.
func roundTrip(t *testing.T, port string) error {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	b := make([]byte, 5)
	_, err = c.Read(b)
	if err == nil && string(b) != "ping\n" {
		err = os.ErrInvalid
	}
	return err
}

// TestNodePublish covers TLS and non-TLS publishes, publishing twice, another volume at a used target,
// read-only, access points, unpublish (also of a never-mounted target), NodeGetInfo and Probe.
func TestNodePublish(t *testing.T) {
	w := setup(t)
	d := w.node.Start(t, w.bin, "node")
	n := csi.NewNodeClient(d.Conn)
	pods := filepath.Join(w.node.Dir, "pods")

	info, err := n.NodeGetInfo(t.Context(), &csi.NodeGetInfoRequest{})
	if err != nil || info.NodeId != "i-0e2e0e2e0e2e0e2e0" || info.AccessibleTopology.GetSegments()["topology.kubernetes.io/zone"] != "us-east-1b" {
		t.Fatalf("NodeGetInfo = %v, %v; want fakeaws' instance and zone", info, err)
	}
	// efs-utils was prepared: the link and the rendered config
	if dst, _ := os.Readlink(w.node.Link); dst != w.node.ConfigDir {
		t.Fatalf("%s -> %q, want %s", w.node.Link, dst, w.node.ConfigDir)
	}

	tlsTarget := filepath.Join(pods, "tls", "mount")
	t.Run("tls publish", func(t *testing.T) {
		if err := w.publish(t, n, fsA, tlsTarget, false, nil); err != nil {
			t.Fatal(err)
		}
		if !harness.IsMounted(tlsTarget) {
			t.Fatal("target is not a mount point")
		}
		recs := w.node.Recorded(t)
		if len(recs) != 1 || recs[0].Source != "127.0.0.1:/" || !strings.Contains(recs[0].Options, "nfsvers=4.1") {
			t.Fatalf("mount.nfs4 calls = %+v, want one through the local relay", recs)
		}
		if err := roundTrip(t, relayPort(t, recs[0])); err != nil {
			t.Fatalf("relay does not reach the mount target: %v", err)
		}
		states := w.node.States(t)
		if len(states) != 1 {
			t.Fatalf("state files %v, want one", states)
		}
		for _, st := range states {
			if st.FSID != fsA || st.PID <= 0 {
				t.Fatalf("state %+v", st)
			}
		}
		// the data path: a file written through the target lands in the export (the recorder's bind mount)
		if err := os.WriteFile(filepath.Join(tlsTarget, "hello"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(w.node.Export, "hello")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("publish twice", func(t *testing.T) {
		if err := w.publish(t, n, fsA, tlsTarget, false, nil); err != nil {
			t.Fatal(err)
		}
		if got := len(w.node.Recorded(t)); got != 1 {
			t.Fatalf("%d mounts after publishing twice, want 1", got)
		}
		if got := len(harness.MountsUnder(tlsTarget)); got != 1 {
			t.Fatalf("%d stacked mounts, want 1", got)
		}
	})
	t.Run("another volume at the target", func(t *testing.T) {
		err := w.publish(t, n, fsB, tlsTarget, false, nil)
		if status.Code(err) != codes.AlreadyExists || !strings.Contains(err.Error(), fsA) {
			t.Fatalf("err = %v, want AlreadyExists naming the mounted volume", err)
		}
	})
	t.Run("readonly", func(t *testing.T) {
		target := filepath.Join(pods, "ro", "mount")
		if err := w.publish(t, n, fsA, target, true, nil); err != nil {
			t.Fatal(err)
		}
		recs := w.node.Recorded(t)
		last := recs[len(recs)-1]
		if !slices.Contains(strings.Split(last.Options, ","), "ro") {
			t.Fatalf("read-only publish mounted with %q", last.Options)
		}
	})
	t.Run("non-tls publish", func(t *testing.T) {
		target := filepath.Join(pods, "plain", "mount")
		before := len(w.node.States(t))
		plain := harness.StartPlainTarget(t) // an NFS server reached without TLS
		if err := w.publish(t, n, fsB+":/data", target, false, map[string]string{"encryptInTransit": "false", "mounttargetip": plain}); err != nil {
			t.Fatal(err)
		}
		recs := w.node.Recorded(t)
		last := recs[len(recs)-1]
		if last.Source != plain+":/data" || strings.Contains(last.Options, "port=") {
			t.Fatalf("non-TLS mount.nfs4 call %+v, want %s:/data without a relay port", last, plain)
		}
		if len(w.node.States(t)) != before {
			t.Fatal("a non-TLS mount started a relay")
		}
	})
	apTarget := filepath.Join(pods, "ap", "mount")
	t.Run("access point", func(t *testing.T) {
		if err := w.publish(t, n, "efs:"+fsA+"::"+apA, apTarget, false, nil); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, st := range w.node.States(t) {
			found = found || (st.AccessPoint == apA && st.FSID == fsA && filepath.Clean(st.Mountpoint) == apTarget)
		}
		if !found {
			t.Fatalf("no relay state for access point %s: %v", apA, w.node.States(t))
		}
	})
	t.Run("unpublish", func(t *testing.T) {
		for _, target := range []string{tlsTarget, apTarget, tlsTarget} { // the second unpublish of tlsTarget is a no-op
			if _, err := n.NodeUnpublishVolume(t.Context(), &csi.NodeUnpublishVolumeRequest{VolumeId: fsA, TargetPath: target}); err != nil {
				t.Fatal(err)
			}
			if harness.IsMounted(target) {
				t.Fatalf("%s still mounted", target)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Fatalf("%s not removed: %v", target, err)
			}
		}
		never := filepath.Join(pods, "never", "mount")
		if err := os.MkdirAll(never, 0o750); err != nil {
			t.Fatal(err)
		}
		if _, err := n.NodeUnpublishVolume(t.Context(), &csi.NodeUnpublishVolumeRequest{VolumeId: fsA, TargetPath: never}); err != nil {
			t.Fatalf("unpublish of a never-mounted target: %v", err)
		}
		if _, err := n.NodeUnpublishVolume(t.Context(), &csi.NodeUnpublishVolumeRequest{VolumeId: fsA, TargetPath: filepath.Join(pods, "missing")}); err != nil {
			t.Fatalf("unpublish of a missing target: %v", err)
		}
	})
}

// TestDriverRestartAdoptsRelay publishes a TLS volume, stops the driver, kills the relay (as a node pod restart
// does), and starts a new driver on the same node: its watchdog must restart the relay from the state file, and
// publishing the volume again must find the mount.
func TestDriverRestartAdoptsRelay(t *testing.T) {
	w := setup(t)
	target := filepath.Join(w.node.Dir, "pods", "p1", "mount")
	first := w.node.Start(t, w.bin, "node")
	if err := w.publish(t, csi.NewNodeClient(first.Conn), fsA, target, false, nil); err != nil {
		t.Fatal(err)
	}
	port := relayPort(t, w.node.Recorded(t)[0])
	var old harness.State
	for _, st := range w.node.States(t) {
		old = st
	}
	first.Stop()
	if err := syscall.Kill(-old.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill relay %d: %v", old.PID, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for roundTrip(t, port) == nil {
		if time.Now().After(deadline) {
			t.Fatal("relay still answers after being killed")
		}
		time.Sleep(50 * time.Millisecond)
	}

	second := w.node.Start(t, w.bin, "node")
	deadline = time.Now().Add(30 * time.Second)
	for {
		var st harness.State
		for _, s := range w.node.States(t) {
			st = s
		}
		if st.PID > 0 && st.PID != old.PID && roundTrip(t, port) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new driver's watchdog did not restart the relay on port %s (state %+v)", port, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	n := csi.NewNodeClient(second.Conn)
	if err := w.publish(t, n, fsA, target, false, nil); err != nil {
		t.Fatalf("publish after restart: %v", err)
	}
	if got := len(w.node.Recorded(t)); got != 1 {
		t.Fatalf("%d mounts after the restart, want the original one", got)
	}
	if _, err := n.NodeUnpublishVolume(t.Context(), &csi.NodeUnpublishVolumeRequest{VolumeId: fsA, TargetPath: target}); err != nil {
		t.Fatal(err)
	}
	w.node.ForgetUnmounted(t)
}
