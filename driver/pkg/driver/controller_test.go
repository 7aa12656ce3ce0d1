package driver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/openshift/aws-efs-csi/driver/pkg/fsref"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

func TestCreateVolumeDefaultsAndRetry(t *testing.T) {
	e := newEnv(t, envOpts{tags: map[string]string{"team": "storage"}})
	vol, err := e.create(t, "pvc-1", e.params())
	if err != nil {
		t.Fatal(err)
	}
	h, err := volume.ParseHandle(vol.GetVolumeId())
	if err != nil || h.FileSystemID != e.fsID || h.AccessPointID == "" || h.Typed {
		t.Fatalf("volume ID %q: %+v, %v", vol.GetVolumeId(), h, err)
	}
	if vol.GetCapacityBytes() != 5<<30 {
		t.Errorf("capacity = %d", vol.GetCapacityBytes())
	}
	aps := e.aws.AccessPoints(e.fsID)
	if len(aps) != 1 {
		t.Fatalf("%d access points, want 1", len(aps))
	}
	ap := aps[0]
	if ap.PosixUser == nil || ap.PosixUser.Gid != 50000 || ap.PosixUser.Uid != 50000 || ap.ClientToken != "pvc-1" {
		t.Errorf("access point %+v", ap)
	}
	// Upstream's default directory: /<volume name>, no suffix.
	if ap.RootDirectory.Path != "/pvc-1" || ap.RootDirectory.CreationInfo.Permissions != "700" {
		t.Errorf("root directory %+v", ap.RootDirectory)
	}
	tags := map[string]string{}
	for _, tag := range ap.Tags {
		tags[tag.Key] = tag.Value
	}
	if tags["team"] != "storage" || tags[provision.ClusterTagKey] != "true" {
		t.Errorf("tags %v", tags)
	}
	// A retried CreateVolume returns the same volume and creates nothing.
	again, err := e.create(t, "pvc-1", e.params())
	if err != nil || again.GetVolumeId() != vol.GetVolumeId() {
		t.Fatalf("retry = %v, %v; want %s", again.GetVolumeId(), err, vol.GetVolumeId())
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != 1 {
		t.Fatalf("%d access points after retry, want 1", n)
	}
	// The same name with another capacity is refused.
	_, err = e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "pvc-1", Parameters: e.params(),
		VolumeCapabilities: mountRWX, CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
	wantCode(t, err, codes.AlreadyExists, "capacity")
}

func TestCreateVolumeInvalidParameters(t *testing.T) {
	e := newEnv(t, envOpts{})
	tests := []struct {
		name   string
		params map[string]string
		want   string
	}{
		{"mode", e.params("provisioningMode", "efs-dir"), "provisioningMode"},
		{"fs id", e.params("fileSystemId", "fs-nothex!"), "fileSystemId"},
		{"perms", e.params("directoryPerms", "999"), "directoryPerms"},
		{"uid", e.params("uid", "-1"), "uid"},
		{"gid", e.params("gid", "x"), "gid"},
		{"range", e.params("gidRangeStart", "10"), "gidRangeEnd"},
		{"range order", e.params("gidRangeStart", "10", "gidRangeEnd", "5"), "gidRangeEnd"},
		{"base path", e.params("basePath", "../x"), "basePath"},
		{"pattern", e.params("subPathPattern", "${.PV.uid}"), "subPathPattern"},
		{"root", e.params("subPathPattern", "/", "ensureUniqueDirectory", "false"), "subPathPattern"},
		{"long", e.params("basePath", strings.Repeat("x", 95)), "cannot be shortened to 100"},
		{"reuse", e.params("reuseAccessPoint", "y"), "reuseAccessPoint"},
		{"zone affinity", e.params("enforceZoneAffinity", "y"), "enforceZoneAffinity"},
		{"tagging", e.params("enableTagging", "y"), "enableTagging"},
		{"perms absent", func() map[string]string { m := e.params(); delete(m, "directoryPerms"); return m }(), "directoryPerms"},
		{"no such fs", e.params("fileSystemId", "fs-00000000deadbeef"), "fs-00000000deadbeef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.create(t, "pvc-bad", tt.params)
			wantCode(t, err, codes.InvalidArgument, tt.want)
		})
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != 0 {
		t.Fatalf("%d access points left by failed creates", n)
	}
	_, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Parameters: e.params(), VolumeCapabilities: mountRWX})
	wantCode(t, err, codes.InvalidArgument, "name")
}

func TestCreateVolumeTaggingConflictsWithTagsFlag(t *testing.T) {
	e := newEnv(t, envOpts{tags: map[string]string{"a": "b"}})
	_, err := e.create(t, "pvc-1", e.params("enableTagging", "false"))
	wantCode(t, err, codes.InvalidArgument, "enableTagging", "--tags")
}

func TestCreateVolumeAccessModes(t *testing.T) {
	e := newEnv(t, envOpts{})
	modes := map[csi.VolumeCapability_AccessMode_Mode]codes.Code{
		csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER:        codes.OK,
		csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER:   codes.OK,
		csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY:    codes.OK, // ReadOnlyMany
		csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER: codes.OK, // ReadWriteOncePod
		csi.VolumeCapability_AccessMode_UNKNOWN:                   codes.InvalidArgument,
	}
	i := 0
	for mode, want := range modes {
		i++
		caps := []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode}}}
		_, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), Parameters: e.params(), VolumeCapabilities: caps})
		wantCode(t, err, want)
	}
	block := []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
	_, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "pvc-block", Parameters: e.params(), VolumeCapabilities: block})
	wantCode(t, err, codes.InvalidArgument, "block")
}

func TestCreateVolumeConcurrentUniqueGIDs(t *testing.T) {
	e := newEnv(t, envOpts{})
	for i := range 20 { // GIDs already taken behind the driver's back
		e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, PosixUser: &fakeaws.PosixUser{Uid: 1, Gid: int64(50000 + 2*i)}})
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.create(t, fmt.Sprintf("pvc-%d", i), e.params()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	seen := map[int64]string{}
	for _, ap := range e.aws.AccessPoints(e.fsID) {
		if other, dup := seen[ap.PosixUser.Gid]; dup {
			t.Errorf("GID %d on %s and %s", ap.PosixUser.Gid, ap.AccessPointId, other)
		}
		seen[ap.PosixUser.Gid] = ap.AccessPointId
	}
	if len(seen) != 60 {
		t.Fatalf("%d distinct GIDs, want 60", len(seen))
	}
}

func TestCreateVolumeExhaustion(t *testing.T) {
	e := newEnv(t, envOpts{quota: 3})
	p := e.params("gidRangeStart", "100", "gidRangeEnd", "101")
	for i := range 2 {
		if _, err := e.create(t, fmt.Sprintf("pvc-%d", i), p); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.create(t, "pvc-2", p)
	wantCode(t, err, codes.ResourceExhausted, "gidRangeStart", "gidRangeEnd", "fileSystemId")
	if _, err := e.create(t, "pvc-3", e.params()); err != nil {
		t.Fatal(err)
	}
	_, err = e.create(t, "pvc-4", e.params())
	wantCode(t, err, codes.ResourceExhausted, "access point quota", "fileSystemId")
	if n := len(e.aws.AccessPoints(e.fsID)); n != 3 {
		t.Fatalf("%d access points, want 3", n)
	}
}

func TestCreateVolumeAWSFailuresAreRetryableAndLeaveNothing(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.aws.SetFault("CreateAccessPoint", fakeaws.Fault{ThrottleProbability: 1})
	_, err := e.create(t, "pvc-1", e.params())
	wantCode(t, err, codes.Unavailable, "CreateAccessPoint")
	e.aws.SetFault("CreateAccessPoint", fakeaws.Fault{ErrorProbability: 1, ErrorStatus: 503})
	_, err = e.create(t, "pvc-1", e.params())
	wantCode(t, err, codes.Unavailable)
	e.aws.SetFault("CreateAccessPoint", fakeaws.Fault{})
	e.aws.SetFault("DescribeFileSystems", fakeaws.Fault{ThrottleProbability: 1})
	_, err = e.create(t, "pvc-1", e.params("enforceZoneAffinity", "true"))
	wantCode(t, err, codes.Unavailable)
	if n := len(e.aws.AccessPoints(e.fsID)); n != 0 {
		t.Fatalf("%d access points left by failed creates, want 0", n)
	}
	e.aws.SetFault("DescribeFileSystems", fakeaws.Fault{})
	if _, err := e.create(t, "pvc-1", e.params()); err != nil {
		t.Fatalf("after the faults clear: %v", err)
	}
}

func TestCreateVolumeOneZoneTopology(t *testing.T) {
	e := newEnv(t, envOpts{})
	oneZone := e.aws.AddFileSystem(fakeaws.FileSystem{AvailabilityZoneName: "us-east-1b"})
	vol, err := e.create(t, "pvc-1", e.params("fileSystemId", oneZone, "enforceZoneAffinity", "true"))
	if err != nil {
		t.Fatal(err)
	}
	top := vol.GetAccessibleTopology()
	if len(top) != 1 || top[0].GetSegments()[TopologyZoneKey] != "us-east-1b" {
		t.Fatalf("topology = %v", top)
	}
	vol, err = e.create(t, "pvc-2", e.params("enforceZoneAffinity", "true"))
	if err != nil || len(vol.GetAccessibleTopology()) != 0 {
		t.Fatalf("regional file system: %v, %v; want no topology", vol.GetAccessibleTopology(), err)
	}
}

func TestReuseAccessPointTokens(t *testing.T) {
	e := newEnv(t, envOpts{})
	reuse := func(ns, claim, format string) (*csi.Volume, error) {
		p := e.params("reuseAccessPoint", "true", scparams.ParamPVCNamespace, ns, scparams.ParamPVCName, claim)
		if format != "" {
			p[scparams.ParamReuseTokenFormat] = format
		}
		return e.create(t, "pvc-"+ns+"-"+claim+format, p)
	}
	a, err := reuse("team-a", "data", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := reuse("team-b", "data", "")
	if err != nil {
		t.Fatal(err)
	}
	if a.GetVolumeId() == b.GetVolumeId() {
		t.Fatal("equal claim names in two namespaces share an access point")
	}
	// Another cluster with the same claim finds the same access point (another volume name, same token).
	p := e.params("reuseAccessPoint", "true", scparams.ParamPVCNamespace, "team-a", scparams.ParamPVCName, "data")
	again, err := e.create(t, "pvc-other-cluster", p)
	if err != nil || again.GetVolumeId() != a.GetVolumeId() {
		t.Fatalf("reuse = %v, %v; want %s", again.GetVolumeId(), err, a.GetVolumeId())
	}
	// An access point the upstream driver made (token sha256(claim name)) is found with the upstream format.
	upstream := e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID,
		ClientToken: scparams.ClientToken(scparams.Params{ReuseAccessPoint: true, ReuseTokenFormat: scparams.TokenUpstream, PVCName: "legacy"}, "", ""),
		PosixUser:   &fakeaws.PosixUser{Uid: 50500, Gid: 50500}, RootDirectory: fakeaws.RootDirectory{Path: "/legacy-dir"}})
	old, err := reuse("any", "legacy", scparams.TokenUpstream)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := volume.ParseHandle(old.GetVolumeId()); h.AccessPointID != upstream {
		t.Fatalf("upstream-format reuse got %s, want %s", old.GetVolumeId(), upstream)
	}
}

func TestCrossAccountClientsAreCachedPerRole(t *testing.T) {
	e := newEnv(t, envOpts{})
	role := "arn:aws:iam::210987654321:role/efs-owner"
	e.aws.AddRole(role, "ext-1")
	secrets := map[string]string{scparams.SecretRoleARN: role, scparams.SecretExternalID: "ext-1"}
	for i := range 3 {
		_, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i), Parameters: e.params(),
			VolumeCapabilities: mountRWX, Secrets: secrets})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := e.aws.Calls("AssumeRole"); n != 1 {
		t.Errorf("AssumeRole called %d times for 3 creates, want 1", n)
	}
	keys := e.aws.AssumedRoleKeys(role)
	used := e.aws.CallerAccessKeys("CreateAccessPoint")
	if len(keys) != 1 || len(used) != 1 || used[0] != keys[0] {
		t.Errorf("CreateAccessPoint signed with %v, role keys %v", used, keys)
	}
	// A wrong external ID is another client, and AWS refuses it.
	secrets[scparams.SecretExternalID] = "wrong"
	_, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "pvc-x", Parameters: e.params(),
		VolumeCapabilities: mountRWX, Secrets: secrets})
	if err == nil {
		t.Fatal("create with a wrong external ID succeeded")
	}
}

func TestCrossAccountVolumeContext(t *testing.T) {
	e := newEnv(t, envOpts{})
	role := "arn:aws:iam::210987654321:role/efs-owner"
	e.aws.AddRole(role, "")
	mk := func(name string, secrets map[string]string, kv ...string) map[string]string {
		resp, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: name, Parameters: e.params(kv...),
			VolumeCapabilities: mountRWX, Secrets: secrets})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetVolume().GetVolumeContext()
	}
	mts := e.aws.MountTargets(e.fsID)
	ipOf := map[string]string{}
	for _, mt := range mts {
		ipOf[mt.AvailabilityZoneId] = mt.IpAddress
	}
	ctx := mk("pvc-1", map[string]string{"awsRoleArn": role, "crossaccount": "true"})
	if ctx["crossaccount"] != "true" {
		t.Errorf("crossaccount secret: context %v", ctx)
	}
	ctx = mk("pvc-2", map[string]string{"awsRoleArn": role}, "az", "us-east-1b")
	if ctx["mounttargetip"] != ipOf["use1-az2"] {
		t.Errorf("az us-east-1b: context %v, want IP %s", ctx, ipOf["use1-az2"])
	}
	// az may also name the zone by ID (the same in every account).
	ctx = mk("pvc-2b", map[string]string{"awsRoleArn": role}, "az", "use1-az3")
	if ctx["mounttargetip"] != ipOf["use1-az3"] {
		t.Errorf("az use1-az3: context %v, want IP %s", ctx, ipOf["use1-az3"])
	}
	ctx = mk("pvc-3", map[string]string{"awsRoleArn": role})
	c, err := volume.ParseContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.MountTargetIPs["use1-az1"] != ipOf["use1-az1"] || c.MountTargetIPs["us-east-1a"] != ipOf["use1-az1"] || len(c.MountTargetIPs) != 6 {
		t.Errorf("mount target map %v", c.MountTargetIPs)
	}
	if ctx := mk("pvc-4", nil); len(ctx) != 0 {
		t.Errorf("same-account volume context %v, want empty", ctx)
	}
}

func TestValidateVolumeCapabilities(t *testing.T) {
	e := newEnv(t, envOpts{})
	vol, err := e.create(t, "pvc-1", e.params())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.client.ValidateVolumeCapabilities(t.Context(), &csi.ValidateVolumeCapabilitiesRequest{VolumeId: vol.GetVolumeId(), VolumeCapabilities: mountRWX})
	if err != nil || resp.GetConfirmed() == nil {
		t.Fatalf("validate = %v, %v", resp, err)
	}
	_, err = e.client.ValidateVolumeCapabilities(t.Context(), &csi.ValidateVolumeCapabilitiesRequest{VolumeId: e.fsID + "::fsap-0000000000000000", VolumeCapabilities: mountRWX})
	wantCode(t, err, codes.NotFound)
	_, err = e.client.ValidateVolumeCapabilities(t.Context(), &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "garbage", VolumeCapabilities: mountRWX})
	wantCode(t, err, codes.NotFound)
	_, err = e.client.ValidateVolumeCapabilities(t.Context(), &csi.ValidateVolumeCapabilitiesRequest{VolumeId: vol.GetVolumeId()})
	wantCode(t, err, codes.InvalidArgument)
}

// refs is a FileSystemIDResolver over fixed objects, standing in for the Kubernetes API reads that
// fsref.KubeResolver makes (tested there).
type refs map[string]string

func (r refs) Resolve(_ context.Context, ref scparams.ObjectRef, secret bool) (string, error) {
	v, ok := r[fmt.Sprint(secret, ref.Namespace, ref.Name, ref.Key)]
	if !ok {
		return "", fmt.Errorf("%w: %s/%s", fsref.ErrRefNotFound, ref.Namespace, ref.Name)
	}
	return v, nil
}

func TestCreateVolumeFileSystemIDRefs(t *testing.T) {
	e := newEnv(t, envOpts{})
	noResolver := e.params("fileSystemIdConfigRef", "kube-system/efs/fsid")
	delete(noResolver, "fileSystemId")
	_, err := e.create(t, "pvc-0", noResolver)
	wantCode(t, err, codes.FailedPrecondition, "fileSystemIdConfigRef")

	e.ctrl.cfg.Resolver = refs{fmt.Sprint(false, "kube-system", "efs", "fsid"): e.fsID, fmt.Sprint(true, "kube-system", "efs", "bad"): "nope"}
	p := e.params("fileSystemIdConfigRef", "kube-system/efs/fsid")
	delete(p, "fileSystemId")
	if _, err := e.create(t, "pvc-1", p); err != nil {
		t.Fatal(err)
	}
	p = e.params("fileSystemIdSecretRef", "kube-system/efs/missing")
	delete(p, "fileSystemId")
	_, err = e.create(t, "pvc-2", p)
	wantCode(t, err, codes.InvalidArgument, "fileSystemIdSecretRef", "kube-system/efs/missing")
	p = e.params("fileSystemIdSecretRef", "kube-system/efs/bad")
	delete(p, "fileSystemId")
	_, err = e.create(t, "pvc-3", p)
	wantCode(t, err, codes.InvalidArgument, "fileSystemIdSecretRef", "not a file system ID")
	if contains(err.Error(), "nope") {
		t.Errorf("error shows the Secret's value: %v", err)
	}
}
