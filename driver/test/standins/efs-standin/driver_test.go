package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	efstypes "github.com/aws/aws-sdk-go-v2/service/efs/types"
	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/openshift/aws-efs-csi/driver/test/e2e/harness"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// TestDriverPublishThroughStandin runs the node plugin as the cluster does, minus the kubelet: the driver process
// (node mode, its efs-utils config, static CA file and watchdog) publishes an access point volume through
// mount(8), mount.efs, the TLS relay and the stand-ins. The watchdog reads the stand-in's NFS mount table: it keeps
// the relay while the volume is mounted and stops it once the volume is unpublished.
func TestDriverPublishThroughStandin(t *testing.T) {
	w := newWorld(t)
	harness.InstallMountHelper(t)
	imds, err := fakeaws.Start(fakeaws.Options{InstanceZone: "us-east-1a"}) // instance metadata only
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = imds.Close() })
	node := harness.NewNode(t, filepath.Join(w.dir, "node"), imds.URL(), w.ready.CAFile)
	for i, kv := range node.Env {
		if strings.HasPrefix(kv, "EFS_UTILS_MOUNT_NFS4=") {
			node.Env[i] = "EFS_UTILS_MOUNT_NFS4=" + w.mountNFS4
		}
	}
	w.table = node.MountTable
	bin := harness.BuildDriver(t, w.dir)
	d := node.Start(t, bin, "node", "--efs-utils-conf-overrides=mount:stunnel_cafile="+filepath.Join(node.Link, "efs-utils.crt")+
		",mount:optimize_readahead=false,mount-watchdog:poll_interval_sec=1,mount-watchdog:unmount_count_for_consistency=0,"+
		"mount-watchdog:unmount_grace_period_sec=2")
	n := csi.NewNodeClient(d.Conn)

	fs := w.fs(t, w.ready.RegionalFileSystemID)
	ap, err := w.efsClient(t).CreateAccessPoint(t.Context(), &efs.CreateAccessPointInput{ClientToken: aws.String("pvc-d"),
		FileSystemId: aws.String(fs.ID), PosixUser: &efstypes.PosixUser{Uid: aws.Int64(50000), Gid: aws.Int64(50000)},
		RootDirectory: &efstypes.RootDirectory{Path: aws.String("/dynamic_provisioning/pvc-d"),
			CreationInfo: &efstypes.CreationInfo{OwnerUid: aws.Int64(50000), OwnerGid: aws.Int64(50000), Permissions: aws.String("700")}}})
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(node.Dir, "pods", "p1", "volumes", "mount")
	_, err = n.NodePublishVolume(t.Context(), &csi.NodePublishVolumeRequest{VolumeId: fs.ID + "::" + aws.ToString(ap.AccessPointId),
		TargetPath: target, VolumeContext: map[string]string{"mounttargetip": fs.MountTargets[0].IP},
		VolumeCapability: &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}})
	if err != nil {
		t.Fatalf("NodePublishVolume: %v\n%s", err, w.proc.Logs())
	}
	root := filepath.Join(fs.BackingDir, "dynamic_provisioning", "pvc-d")
	if st, err := os.Stat(root); err != nil || st.Sys().(*syscall.Stat_t).Uid != 50000 || st.Mode().Perm() != 0o700 {
		t.Fatalf("access point root directory: %v, %v", st, err)
	}
	if err := os.WriteFile(filepath.Join(target, "data"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "data")); err != nil {
		t.Fatalf("write through the published volume: %v", err)
	}
	states := node.States(t)
	if len(states) != 1 {
		t.Fatalf("efs-utils state files %v", states)
	}
	var relay int
	for _, st := range states {
		relay = st.PID
	}
	// The watchdog leaves a mount alone for its first 30 s after the state's mount_time (efs-utils 1.36's
	// MOUNT_GRACE_SEC); after that, with unmount_count_for_consistency=0, one poll (every second here) that misses
	// it in the mount table marks it unmounted, and the relay is stopped at the first poll 2 s later. So the wait is
	// bounded by the state's own clock: by mount_time + 30 s + 1 s (a poll) + 2 s (unmount grace) + 1 s (the poll
	// that stops the relay) + 1 s (slack for a busy machine), a watchdog that missed the mount would have stopped
	// the relay, and this one must not have.
	time.Sleep(time.Until(mountTime(t, node.StateDir).Add(35 * time.Second)))
	if err := syscall.Kill(relay, 0); err != nil {
		t.Fatalf("the watchdog stopped the relay of a mounted volume: %v\n%s", err, d.Logs())
	}
	for name, raw := range rawStates(t, node.StateDir) {
		if strings.Contains(raw, "unmount_") {
			t.Fatalf("the watchdog counts the mounted volume as unmounted: %s %s", name, raw)
		}
	}
	if _, err := n.NodeUnpublishVolume(t.Context(), &csi.NodeUnpublishVolumeRequest{VolumeId: fs.ID + "::" + aws.ToString(ap.AccessPointId),
		TargetPath: target}); err != nil {
		t.Fatal(err)
	}
	w.waitTable(t, 0)
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(relay, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("relay %d still running 20s after unpublish\n%s", relay, d.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(root, "data")); err != nil {
		t.Fatalf("data lost after unpublish: %v", err)
	}
}

// mountTime returns the mount_time (seconds since the epoch, written by mount.efs) of the one state file in dir.
func mountTime(t *testing.T, dir string) time.Time {
	t.Helper()
	for name, raw := range rawStates(t, dir) {
		var st struct {
			MountTime float64 `json:"mount_time"`
		}
		if err := json.Unmarshal([]byte(raw), &st); err != nil || st.MountTime == 0 {
			t.Fatalf("state file %s has no mount_time (%v): %s", name, err, raw)
		}
		return time.Unix(0, int64(st.MountTime*float64(time.Second)))
	}
	t.Fatalf("no state file in %s", dir)
	return time.Time{}
}

// rawStates returns the efs-utils state files (fs-…) of dir as text.
func rawStates(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "fs-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}
