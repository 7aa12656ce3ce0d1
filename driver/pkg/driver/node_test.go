package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mountutils "k8s.io/mount-utils"

	"github.com/openshift/aws-efs-csi/driver/pkg/mount"
	"github.com/openshift/aws-efs-csi/driver/pkg/nodeinfo"
	"github.com/openshift/aws-efs-csi/driver/pkg/volstats"
)

const (
	nodeFS = "fs-0123456789abcdef0"
	nodeAP = "fsap-0123456789abcdef0"
)

// fakeMountOS is mount-utils' stateful FakeMounter plus force unmount.
type fakeMountOS struct{ *mountutils.FakeMounter }

func (f fakeMountOS) UnmountWithForce(target string, _ time.Duration) error { return f.Unmount(target) }

func newTestNode(t *testing.T, cfg NodeConfig) (*Node, *mountutils.FakeMounter, string) {
	t.Helper()
	dir := t.TempDir()
	recs, err := mount.NewRecords(filepath.Join(dir, "records"))
	if err != nil {
		t.Fatal(err)
	}
	fm := mountutils.NewFakeMounter(nil)
	cfg.Publisher = mount.New(mount.Config{OS: fakeMountOS{fm}, Records: recs})
	n := NewNode(cfg)
	n.SetInfo(nodeinfo.Info{InstanceID: "i-0123456789abcdef0", Zone: "us-east-1a", ZoneID: "use1-az1", Region: "us-east-1"})
	return n, fm, dir
}

func mountCap(mode csi.VolumeCapability_AccessMode_Mode, flags ...string) *csi.VolumeCapability {
	return &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{MountFlags: flags}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode}}
}

var rwx = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER

// TestNodePublishErrors lists every NodePublishVolume error path with its gRPC code and the field it names.
func TestNodePublishErrors(t *testing.T) {
	block := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: rwx}}
	cases := []struct {
		name     string
		volumeID string
		target   string // "" = none; "rel" = relative; otherwise under the temp dir
		cap      *csi.VolumeCapability
		ctx      map[string]string
		code     codes.Code
		msg      string
	}{
		{name: "no volume ID", target: "t", cap: mountCap(rwx), code: codes.InvalidArgument, msg: "volume ID is missing"},
		{name: "no target", volumeID: nodeFS, cap: mountCap(rwx), code: codes.InvalidArgument, msg: "target path is missing"},
		{name: "relative target", volumeID: nodeFS, target: "rel", cap: mountCap(rwx), code: codes.InvalidArgument, msg: `target path "rel": want an absolute path`},
		{name: "no capability", volumeID: nodeFS, target: "t", code: codes.InvalidArgument, msg: "volume capability is missing"},
		{name: "block", volumeID: nodeFS, target: "t", cap: block, code: codes.InvalidArgument, msg: "block access is not supported"},
		{name: "fsType", volumeID: nodeFS, target: "t", cap: &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "ext4"}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: rwx}}, code: codes.InvalidArgument, msg: `fsType "ext4"`},
		{name: "access mode unknown", volumeID: nodeFS, target: "t", cap: mountCap(csi.VolumeCapability_AccessMode_UNKNOWN), code: codes.InvalidArgument, msg: "access mode UNKNOWN"},
		{name: "bad handle", volumeID: "fs-xyz", target: "t", cap: mountCap(rwx), code: codes.InvalidArgument, msg: `file system ID "fs-xyz"`},
		{name: "bad access point in handle", volumeID: nodeFS + "::ap-1", target: "t", cap: mountCap(rwx), code: codes.InvalidArgument, msg: `access point ID "ap-1"`},
		{name: "unknown attribute", volumeID: nodeFS, target: "t", cap: mountCap(rwx), ctx: map[string]string{"subpath": "/x"}, code: codes.InvalidArgument, msg: `unknown volume attribute "subpath"`},
		{name: "bad encryptInTransit", volumeID: nodeFS, target: "t", cap: mountCap(rwx), ctx: map[string]string{"encryptInTransit": "yes please"}, code: codes.InvalidArgument, msg: `encryptInTransit "yes please"`},
		{name: "bad mounttargetip", volumeID: nodeFS, target: "t", cap: mountCap(rwx), ctx: map[string]string{"mounttargetip": "1.2.3"}, code: codes.InvalidArgument, msg: "mounttargetip"},
		{name: "bad mounttargetipmap", volumeID: nodeFS, target: "t", cap: mountCap(rwx), ctx: map[string]string{"mounttargetipmap": "{"}, code: codes.InvalidArgument, msg: "mounttargetipmap"},
		{name: "bad crossaccount", volumeID: nodeFS, target: "t", cap: mountCap(rwx), ctx: map[string]string{"crossaccount": "2"}, code: codes.InvalidArgument, msg: `crossaccount "2"`},
		{name: "crossaccount mount option", volumeID: nodeFS, target: "t", cap: mountCap(rwx, "crossaccount"), code: codes.InvalidArgument, msg: "mount option crossaccount"},
		{name: "tls with eit false", volumeID: nodeFS, target: "t", cap: mountCap(rwx, "tls"), ctx: map[string]string{"encryptInTransit": "false"}, code: codes.InvalidArgument, msg: "mount option tls conflicts with volume attribute encryptInTransit=false"},
		{name: "accesspoint conflict", volumeID: nodeFS + "::" + nodeAP, target: "t", cap: mountCap(rwx, "accesspoint=fsap-11111111111111111"), code: codes.InvalidArgument, msg: "mount option accesspoint=fsap-11111111111111111 conflicts"},
		{name: "option conflict", volumeID: nodeFS, target: "t", cap: mountCap(rwx, "hard", "soft"), code: codes.InvalidArgument, msg: "mount options hard and soft conflict"},
		{name: "crossaccount with ip", volumeID: nodeFS, target: "t", cap: mountCap(rwx), ctx: map[string]string{"crossaccount": "true", "mounttargetip": "10.0.0.1"}, code: codes.InvalidArgument, msg: "crossaccount=true conflicts with mount target IP"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, fm, dir := newTestNode(t, NodeConfig{})
			target := tc.target
			if target != "" && target != "rel" {
				target = filepath.Join(dir, target)
			}
			_, err := n.NodePublishVolume(t.Context(), &csi.NodePublishVolumeRequest{VolumeId: tc.volumeID, TargetPath: target,
				VolumeCapability: tc.cap, VolumeContext: tc.ctx})
			if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %s naming %q", err, tc.code, tc.msg)
			}
			if len(fm.MountPoints) != 0 {
				t.Fatalf("mounted despite the error: %v", fm.MountPoints)
			}
		})
	}
}

func TestNodePublishUnpublish(t *testing.T) {
	n, fm, dir := newTestNode(t, NodeConfig{})
	target := filepath.Join(dir, "pod", "mount")
	pub := func(id string, cap *csi.VolumeCapability, ro bool, tgt string) error {
		_, err := n.NodePublishVolume(t.Context(), &csi.NodePublishVolumeRequest{VolumeId: id, TargetPath: tgt, VolumeCapability: cap, Readonly: ro,
			VolumeContext: map[string]string{"mounttargetipmap": `{"use1-az1":"10.0.0.1","use1-az2":"10.0.0.2"}`}})
		return err
	}
	vol := nodeFS + "::" + nodeAP
	for i := 0; i < 2; i++ {
		if err := pub(vol, mountCap(rwx), true, target); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if len(fm.MountPoints) != 1 {
		t.Fatalf("mounts %v, want one", fm.MountPoints)
	}
	mp := fm.MountPoints[0]
	if mp.Device != nodeFS+":/" || mp.Type != "efs" || strings.Join(mp.Opts, ",") != "tls,accesspoint="+nodeAP+",mounttargetip=10.0.0.1,ro" {
		t.Fatalf("mount = %+v", mp)
	}
	if err := pub(nodeFS, mountCap(rwx), true, target); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("other volume at the same target: %v, want AlreadyExists", err)
	}
	if err := pub(vol, mountCap(rwx), false, target); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("same volume read-write at a read-only target: %v, want AlreadyExists", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := n.NodeUnpublishVolume(t.Context(), &csi.NodeUnpublishVolumeRequest{VolumeId: vol, TargetPath: target}); err != nil {
			t.Fatalf("unpublish %d: %v", i, err)
		}
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("target left behind")
	}
	// ReadWriteOncePod
	rwop := mountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER)
	if err := pub(vol, rwop, false, filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := pub(vol, rwop, false, filepath.Join(dir, "b")); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("second RWOP target: %v, want FailedPrecondition", err)
	}
	for _, tc := range []struct {
		req  *csi.NodeUnpublishVolumeRequest
		want string
	}{
		{&csi.NodeUnpublishVolumeRequest{TargetPath: target}, "volume ID is missing"},
		{&csi.NodeUnpublishVolumeRequest{VolumeId: vol}, "target path is missing"},
	} {
		if _, err := n.NodeUnpublishVolume(t.Context(), tc.req); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("unpublish %v: %v", tc.req, err)
		}
	}
}

func TestNodeInflightLimit(t *testing.T) {
	n, _, dir := newTestNode(t, NodeConfig{MaxInflightMounts: 1})
	n.mounts <- struct{}{} // one mount running
	_, err := n.NodePublishVolume(t.Context(), &csi.NodePublishVolumeRequest{VolumeId: nodeFS, TargetPath: filepath.Join(dir, "t"), VolumeCapability: mountCap(rwx)})
	if status.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "--max-inflight-mount-calls") {
		t.Fatalf("err = %v, want Aborted naming the flag", err)
	}
}

func TestNodeGetInfoAndCapabilities(t *testing.T) {
	n, _, _ := newTestNode(t, NodeConfig{MaxVolumesPerNode: 20})
	info, err := n.NodeGetInfo(t.Context(), &csi.NodeGetInfoRequest{})
	if err != nil || info.NodeId != "i-0123456789abcdef0" || info.MaxVolumesPerNode != 20 || info.AccessibleTopology.Segments[TopologyZoneKey] != "us-east-1a" {
		t.Fatalf("NodeGetInfo = %v, %v", info, err)
	}
	unknown := NewNode(NodeConfig{})
	if _, err := unknown.NodeGetInfo(t.Context(), &csi.NodeGetInfoRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("before identity: %v, want Unavailable", err)
	}
	caps, _ := n.NodeGetCapabilities(t.Context(), &csi.NodeGetCapabilitiesRequest{})
	if len(caps.Capabilities) != 1 || caps.Capabilities[0].GetRpc().GetType() != csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER {
		t.Fatalf("capabilities without stats: %v", caps)
	}
	if _, err := n.NodeGetVolumeStats(t.Context(), &csi.NodeGetVolumeStatsRequest{VolumeId: nodeFS, VolumePath: "/"}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("stats off: %v, want Unimplemented", err)
	}
}

func TestNodeGetVolumeStats(t *testing.T) {
	st := volstats.New(volstats.Config{})
	defer st.Close()
	n, _, dir := newTestNode(t, NodeConfig{Stats: st})
	caps, _ := n.NodeGetCapabilities(t.Context(), &csi.NodeGetCapabilitiesRequest{})
	if len(caps.Capabilities) != 2 {
		t.Fatalf("capabilities with stats: %v", caps)
	}
	for _, tc := range []struct {
		id, path string
		code     codes.Code
		msg      string
	}{
		{"", dir, codes.InvalidArgument, "volume ID is missing"},
		{nodeFS, "", codes.InvalidArgument, "volume path is missing"},
		{"bogus", dir, codes.InvalidArgument, "invalid volume handle"},
		{nodeFS, filepath.Join(dir, "missing"), codes.NotFound, "volume path not found"},
	} {
		_, err := n.NodeGetVolumeStats(t.Context(), &csi.NodeGetVolumeStatsRequest{VolumeId: tc.id, VolumePath: tc.path})
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("stats(%q, %q) = %v, want %s %q", tc.id, tc.path, err, tc.code, tc.msg)
		}
	}
	resp, err := n.NodeGetVolumeStats(t.Context(), &csi.NodeGetVolumeStatsRequest{VolumeId: nodeFS, VolumePath: dir})
	if err != nil || len(resp.Usage) == 0 {
		t.Fatalf("first stats: %v, %v", resp, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for resp.Usage[0].Unit != csi.VolumeUsage_BYTES {
		if time.Now().After(deadline) {
			t.Fatal("usage never measured")
		}
		time.Sleep(5 * time.Millisecond)
		resp, _ = n.NodeGetVolumeStats(t.Context(), &csi.NodeGetVolumeStatsRequest{VolumeId: nodeFS, VolumePath: dir})
	}
	if len(resp.Usage) != 2 || resp.Usage[1].Unit != csi.VolumeUsage_INODES || resp.Usage[1].Used < 1 {
		t.Fatalf("usage = %v", resp.Usage)
	}
}
