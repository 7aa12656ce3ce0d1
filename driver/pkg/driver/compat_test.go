package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/pkg/mount"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// Documented differences (docs/driver/differences-from-upstream.md) a compatibility row may name instead of
// matching upstream.
const (
	diffUniqueSuffix  = "ensureUniqueDirectory suffix"
	diffCapacityTag   = "Capacity"
	diffReuseToken    = "reuseAccessPoint tokens"
	diffAZByID        = "Mount-target choice across accounts"
	diffRootRefused   = "Root directory"
	diffLongNames     = "Long names"
	diffLegacyPathPVs = "Legacy path attribute"
)

// compatVolume is the volume name the provisioner would send (the PV name) and the claim it is for.
const (
	compatVolume    = "pvc-5b1c7e1e-0b7a-4a4e-9d55-7f6a1f1c2d3e"
	compatClaim     = "claim"
	compatNamespace = "ns"
)

// TestCompatibilityStorageClasses runs the StorageClass parameter sets of upstream's docs and examples
// (examples/kubernetes/efs/*/specs/storageclass*.yaml, docs/parameters.md) through CreateVolume against fakeaws and
// states, per row, the access point upstream documents (root path, POSIX user, creation info, tags, volume context),
// or names the documented difference.
func TestCompatibilityStorageClasses(t *testing.T) {
	suffixed := func(dir string) string { return dir + "-" } // then a UUID-shaped suffix: upstream random, ours derived
	tests := []struct {
		name     string
		params   map[string]string
		secrets  map[string]string
		volume   string
		root     string // exact root, or a prefix ending in "-" followed by a 36-character suffix
		uid, gid int64
		perms    string
		context  map[string]string // volume context keys that must be present with these values ("*": any value)
		errCode  string            // a refusal instead of a volume
		diffs    []string          // documented differences this row shows
	}{
		{name: "dynamic provisioning, minimal", params: map[string]string{"directoryPerms": "700"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700", diffs: []string{diffCapacityTag}},
		{name: "upstream dynamic_provisioning example", params: map[string]string{"directoryPerms": "700", "gidRangeStart": "1000",
			"gidRangeEnd": "2000", "basePath": "/dynamic_provisioning", "subPathPattern": "${.PVC.namespace}/${.PVC.name}",
			"ensureUniqueDirectory": "true", "reuseAccessPoint": "false", "enableTagging": "true"},
			root: suffixed("/dynamic_provisioning/ns/claim"), uid: 1000, gid: 1000, perms: "700", diffs: []string{diffUniqueSuffix}},
		{name: "basePath", params: map[string]string{"directoryPerms": "700", "basePath": "/base"},
			root: "/base/" + compatVolume, uid: 50000, gid: 50000, perms: "700"},
		{name: "subPathPattern PV name, unique", params: map[string]string{"directoryPerms": "700", "subPathPattern": "${.PV.name}"},
			root: suffixed("/" + compatVolume), uid: 50000, gid: 50000, perms: "700", diffs: []string{diffUniqueSuffix}},
		{name: "subPathPattern PVC name, not unique", params: map[string]string{"directoryPerms": "700", "subPathPattern": "${.PVC.name}", "ensureUniqueDirectory": "false"},
			root: "/claim", uid: 50000, gid: 50000, perms: "700"},
		{name: "subPathPattern PVC namespace, not unique", params: map[string]string{"directoryPerms": "700", "subPathPattern": "${.PVC.namespace}", "ensureUniqueDirectory": "false"},
			root: "/ns", uid: 50000, gid: 50000, perms: "700"},
		{name: "subPathPattern fixed text and variables", params: map[string]string{"directoryPerms": "700", "subPathPattern": "data/${.PVC.namespace}-${.PVC.name}", "ensureUniqueDirectory": "false"},
			root: "/data/ns-claim", uid: 50000, gid: 50000, perms: "700"},
		{name: "ensureUniqueDirectory without a pattern is ignored", params: map[string]string{"directoryPerms": "700", "ensureUniqueDirectory": "false"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700"},
		{name: "ensureUniqueDirectory not a boolean counts as true", params: map[string]string{"directoryPerms": "700", "subPathPattern": "x", "ensureUniqueDirectory": "yes"},
			root: suffixed("/x"), uid: 50000, gid: 50000, perms: "700", diffs: []string{diffUniqueSuffix}},
		{name: "fixed uid and gid", params: map[string]string{"directoryPerms": "700", "uid": "1001", "gid": "1002"},
			root: "/" + compatVolume, uid: 1001, gid: 1002, perms: "700"},
		{name: "fixed uid, allocated gid", params: map[string]string{"directoryPerms": "700", "uid": "1001"},
			root: "/" + compatVolume, uid: 1001, gid: 50000, perms: "700"},
		{name: "gid range", params: map[string]string{"directoryPerms": "700", "gidRangeStart": "2000", "gidRangeEnd": "2010"},
			root: "/" + compatVolume, uid: 2000, gid: 2000, perms: "700"},
		{name: "directoryPerms with setgid", params: map[string]string{"directoryPerms": "2775"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "2775"},
		{name: "reuseAccessPoint", params: map[string]string{"directoryPerms": "700", "reuseAccessPoint": "true"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700", diffs: []string{diffReuseToken}},
		{name: "enableTagging false", params: map[string]string{"directoryPerms": "700", "enableTagging": "false"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700"},
		{name: "unknown key (fstype) is ignored", params: map[string]string{"directoryPerms": "700", "fstype": "ext4"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700"},
		{name: "cross-account example with az", params: map[string]string{"directoryPerms": "700", "gidRangeStart": "1000", "gidRangeEnd": "2000",
			"basePath": "/dynamic_provisioning", "az": "us-east-1a"}, secrets: map[string]string{"awsRoleArn": compatRole},
			root: "/dynamic_provisioning/" + compatVolume, uid: 1000, gid: 1000, perms: "700", context: map[string]string{"mounttargetip": "*"},
			diffs: []string{diffAZByID}},
		{name: "cross-account default: a mount target map", params: map[string]string{"directoryPerms": "700"}, secrets: map[string]string{"awsRoleArn": compatRole},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700", context: map[string]string{"mounttargetipmap": "*"}, diffs: []string{diffAZByID}},
		{name: "cross-account DNS", params: map[string]string{"directoryPerms": "700"}, secrets: map[string]string{"awsRoleArn": compatRole, "crossaccount": "true"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700", context: map[string]string{"crossaccount": "true"}},
		{name: "externalId without awsRoleArn is ignored", params: map[string]string{"directoryPerms": "700"}, secrets: map[string]string{"externalId": "x-1"},
			root: "/" + compatVolume, uid: 50000, gid: 50000, perms: "700"},
		{name: "subPathPattern / without suffix is refused", params: map[string]string{"directoryPerms": "700", "subPathPattern": "/", "ensureUniqueDirectory": "false"},
			errCode: "InvalidArgument", diffs: []string{diffRootRefused}},
		{name: "128-character volume name", params: map[string]string{"directoryPerms": "700"}, volume: "pvc-" + strings.Repeat("a", 124),
			root: "/pvc-" + strings.Repeat("a", 78) + "-", uid: 50000, gid: 50000, perms: "700", diffs: []string{diffLongNames}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOpts{})
			e.aws.AddRole(compatRole, "")
			params := map[string]string{"provisioningMode": "efs-ap", "fileSystemId": e.fsID, scparams.ParamPVName: compatVolume,
				scparams.ParamPVCName: compatClaim, scparams.ParamPVCNamespace: compatNamespace}
			for k, v := range tt.params {
				params[k] = v
			}
			name := tt.volume
			if name == "" {
				name = compatVolume
			}
			resp, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: name, Parameters: params,
				VolumeCapabilities: mountRWX, Secrets: tt.secrets, CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30}})
			if tt.errCode != "" {
				if status.Code(err).String() != tt.errCode {
					t.Fatalf("CreateVolume = %v, want %s", err, tt.errCode)
				}
				checkDiffsDocumented(t, tt.diffs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			h, err := volume.ParseHandle(resp.GetVolume().GetVolumeId())
			if err != nil {
				t.Fatal(err)
			}
			ap, ok := e.aws.AccessPoint(h.AccessPointID)
			if !ok {
				t.Fatalf("access point %s not on fakeaws", h.AccessPointID)
			}
			root := ap.RootDirectory.Path
			if strings.HasSuffix(tt.root, "-") {
				if !strings.HasPrefix(root, tt.root) || len(root) > 100 || len(root)-len(tt.root) < 16 {
					t.Errorf("root %q, want %q followed by a suffix", root, tt.root)
				}
			} else if root != tt.root {
				t.Errorf("root %q, want %q", root, tt.root)
			}
			if ap.PosixUser == nil || ap.PosixUser.Uid != tt.uid || ap.PosixUser.Gid != tt.gid {
				t.Errorf("POSIX user %+v, want %d:%d", ap.PosixUser, tt.uid, tt.gid)
			}
			ci := ap.RootDirectory.CreationInfo
			if ci == nil || ci.OwnerUid != tt.uid || ci.OwnerGid != tt.gid || ci.Permissions != tt.perms {
				t.Errorf("creation info %+v, want owner %d:%d perms %s", ci, tt.uid, tt.gid, tt.perms)
			}
			tags := map[string]string{}
			for _, tag := range ap.Tags {
				tags[tag.Key] = tag.Value
			}
			switch {
			case tt.params["enableTagging"] == "false" && len(tags) != 0:
				t.Errorf("tags %v, want none with enableTagging=false", tags)
			case tt.params["enableTagging"] != "false" && tags[provision.ClusterTagKey] != "true":
				t.Errorf("tags %v, want %s=true (upstream's IAM policy example conditions on it)", tags, provision.ClusterTagKey)
			}
			reuse := tt.params["reuseAccessPoint"] == "true"
			wantToken := name
			if reuse {
				// ours is namespaced (documented difference); upstream's is sha256 of the claim name
				upstream := sha256.Sum256([]byte(compatClaim))
				if ap.ClientToken == hex.EncodeToString(upstream[:]) {
					t.Errorf("new reuse access point carries upstream's colliding token")
				}
			} else if ap.ClientToken != wantToken && len(name) <= 64 {
				t.Errorf("client token %q, want the volume name (upstream)", ap.ClientToken)
			}
			vc := resp.GetVolume().GetVolumeContext()
			for k, v := range tt.context {
				if got, ok := vc[k]; !ok || (v != "*" && got != v) {
					t.Errorf("volume context %v, want %s=%s", vc, k, v)
				}
			}
			if len(tt.context) == 0 && len(vc) != 0 {
				t.Errorf("volume context %v, want none", vc)
			}
			checkDiffsDocumented(t, tt.diffs)
		})
	}
}

const compatRole = "arn:aws:iam::123456789012:role/efs-owner"

// TestCompatibilityPersistentVolumes composes the mount of upstream's static PV examples
// (examples/kubernetes/efs/{static_provisioning,volume_path,access_points,encryption_in_transit,cross_account_mount})
// and states upstream's mount command: `mount -t efs -o <options> <source> <target>`, with the options upstream's
// node.go adds.
func TestCompatibilityPersistentVolumes(t *testing.T) {
	const fs, ap = "fs-e8a95a42", "fsap-068c22f0246419f75"
	tests := []struct {
		name    string
		handle  string
		attrs   map[string]string
		flags   []string
		source  string
		options []string
		diffs   []string
	}{
		{"static fs", "efs:" + fs, nil, nil, fs + ":/", []string{"tls"}, nil},
		{"static fs, legacy handle", fs, nil, nil, fs + ":/", []string{"tls"}, nil},
		{"fs:/path", "efs:" + fs + ":/dir1", nil, nil, fs + ":/dir1", []string{"tls"}, nil},
		{"fs::fsap", "efs:" + fs + "::" + ap, nil, nil, fs + ":/", []string{"tls", "accesspoint=" + ap}, nil},
		{"fs:/path:fsap", fs + ":/sub:" + ap, nil, nil, fs + ":/sub", []string{"tls", "accesspoint=" + ap}, nil},
		{"encryptInTransit true", "efs:" + fs, map[string]string{"encryptInTransit": "true"}, nil, fs + ":/", []string{"tls"}, nil},
		{"encryptInTransit false", "efs:" + fs, map[string]string{"encryptInTransit": "false"}, nil, fs + ":/", nil, nil},
		{"access point forces tls", fs + "::" + ap, map[string]string{"encryptInTransit": "false"}, nil, fs + ":/", []string{"tls", "accesspoint=" + ap}, nil},
		{"mounttargetip", "efs:" + fs, map[string]string{"mounttargetip": "10.0.1.5"}, nil, fs + ":/", []string{"tls", "mounttargetip=10.0.1.5"}, nil},
		{"crossaccount", "efs:" + fs, map[string]string{"crossaccount": "true"}, nil, fs + ":/", []string{"tls", "crossaccount"}, nil},
		{"mountOptions iam, lower-cased", "efs:" + fs, nil, []string{"IAM"}, fs + ":/", []string{"iam", "tls"}, nil},
		{"read-only", "efs:" + fs, nil, []string{"ro"}, fs + ":/", []string{"tls", "ro"}, nil},
		{"v2.x path attribute", fs, map[string]string{"path": "/data"}, nil, fs + ":/data", []string{"tls"}, []string{diffLegacyPathPVs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := volume.ParseHandle(tt.handle)
			if err != nil {
				t.Fatal(err)
			}
			c, err := volume.ParseContext(tt.attrs)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := mount.Compose(mount.Request{Handle: h, Context: c, MountFlags: tt.flags})
			if err != nil {
				t.Fatal(err)
			}
			got, want := slices.Sorted(slices.Values(spec.Options)), slices.Sorted(slices.Values(tt.options))
			if spec.Source != tt.source || spec.FSType != "efs" || !slices.Equal(got, want) {
				t.Errorf("mount -t %s -o %s %s, want mount -t efs -o %s %s", spec.FSType, strings.Join(spec.Options, ","), spec.Source,
					strings.Join(tt.options, ","), tt.source)
			}
			checkDiffsDocumented(t, tt.diffs)
		})
	}
}

// checkDiffsDocumented fails unless every named difference has its entry in differences-from-upstream.md.
func checkDiffsDocumented(t *testing.T, diffs []string) {
	t.Helper()
	doc := differencesDoc(t)
	for _, d := range diffs {
		if !strings.Contains(doc, "| "+d+" |") && !strings.Contains(doc, "## "+d) {
			t.Errorf("difference %q is not listed in docs/driver/differences-from-upstream.md", d)
		}
	}
}

func differencesDoc(t *testing.T) string {
	t.Helper()
	b, err := readRepoFile("docs/driver/differences-from-upstream.md")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readRepoFile(rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", rel))
	return string(b), err
}
