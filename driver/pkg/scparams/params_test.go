package scparams

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
)

func base(kv ...string) map[string]string {
	m := map[string]string{"provisioningMode": "efs-ap", "fileSystemId": "fs-0123abcd", "directoryPerms": "700"}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<delete>" {
			delete(m, kv[i])
			continue
		}
		m[kv[i]] = kv[i+1]
	}
	return m
}

func u32(v uint32) *uint32 { return &v }

// TestParseParamsRejects holds one row per bad parameter of driver-behaviour.md §3; each error must name the
// parameter.
func TestParseParamsRejects(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]string
		wantErr []string
	}{
		{"mode missing", base("provisioningMode", "<delete>"), []string{"provisioningMode", "required"}},
		{"mode unknown", base("provisioningMode", "efs-dir"), []string{"provisioningMode", `"efs-dir"`, "want efs-ap"}},
		{"mode s3files", base("provisioningMode", "s3files-ap"), []string{"provisioningMode", "not supported"}},
		{"no fs", base("fileSystemId", "<delete>"), []string{"fileSystemId", "fileSystemIdConfigRef", "fileSystemIdSecretRef", "exactly one"}},
		{"two fs sources", base("fileSystemIdConfigRef", "ns/cm/key"), []string{"exactly one"}},
		{"bad fs id", base("fileSystemId", "fs-XYZ"), []string{"fileSystemId", `"fs-XYZ"`, "fs-<8 to 40 hex"}},
		{"bad config ref", base("fileSystemId", "<delete>", "fileSystemIdConfigRef", "cm/key"), []string{"fileSystemIdConfigRef", "<namespace>/<name>/<key>"}},
		{"bad secret ref", base("fileSystemId", "<delete>", "fileSystemIdSecretRef", "a//b"), []string{"fileSystemIdSecretRef", "<namespace>/<name>/<key>"}},
		{"perms bad", base("directoryPerms", "rwx"), []string{"directoryPerms", `"rwx"`, "octal"}},
		{"perms 4 digits non-octal", base("directoryPerms", "0779"), []string{"directoryPerms"}},
		{"perms 5 digits", base("directoryPerms", "12775"), []string{"directoryPerms", "3 or 4 digits"}},
		{"uid negative", base("uid", "-1"), []string{"uid", `"-1"`, "[0, 4294967295]"}},
		{"gid text", base("gid", "abc"), []string{"gid", `"abc"`}},
		{"gid too big", base("gid", "4294967296"), []string{"gid"}},
		{"range start alone", base("gidRangeStart", "100"), []string{"gidRangeStart", "gidRangeEnd", "together"}},
		{"range end alone", base("gidRangeEnd", "100"), []string{"gidRangeStart", "gidRangeEnd", "together"}},
		{"range reversed", base("gidRangeStart", "100", "gidRangeEnd", "100"), []string{"gidRangeEnd 100 must be greater than gidRangeStart 100"}},
		{"range negative", base("gidRangeStart", "-5", "gidRangeEnd", "100"), []string{"gidRangeStart", `"-5"`}},
		{"basePath dotdot", base("basePath", "/a/../.."), []string{"basePath", ".."}},
		{"pattern leftover", base("subPathPattern", "${.PVC.uid}"), []string{"subPathPattern", "${.PV.name}"}},
		{"pattern brace", base("subPathPattern", "a}"), []string{"subPathPattern"}},
		{"pattern dotdot", base("subPathPattern", "../x"), []string{"subPathPattern", ".."}},
		{"bad reuse", base("reuseAccessPoint", "1x"), []string{"reuseAccessPoint", "true or false"}},
		{"reuse without pvc", base("reuseAccessPoint", "true"), []string{"reuseAccessPoint", "--extra-create-metadata"}},
		{"bad token format", base("reuseAccessPointTokenFormat", "v2"), []string{"reuseAccessPointTokenFormat", "namespaced or upstream"}},
		{"bad zoneAffinity", base("enforceZoneAffinity", "on"), []string{"enforceZoneAffinity", "true or false"}},
		{"bad tagging", base("enableTagging", "nope"), []string{"enableTagging", "true or false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseParams(tt.in)
			if err == nil || !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("ParseParams(%v) = %v, want ErrInvalidParameter", tt.in, err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseParamsAccepts(t *testing.T) {
	defaults := Params{FileSystemID: "fs-0123abcd", DirectoryPerms: "700", GIDRangeStart: 50000, GIDRangeEnd: 60000,
		EnsureUniqueDirectory: true, EnableTagging: true, ReuseTokenFormat: TokenNamespaced}
	with := func(f func(*Params)) Params { p := defaults; f(&p); return p }
	tests := []struct {
		name string
		in   map[string]string
		want Params
	}{
		{"defaults", base(), defaults},
		{"everything", base("uid", "1000", "gid", "0", "gidRangeStart", "1", "gidRangeEnd", "4294967295", "basePath", "dyn/",
			"subPathPattern", "${.PVC.namespace}/${.PVC.name}", "ensureUniqueDirectory", "false", "reuseAccessPoint", "true",
			"reuseAccessPointTokenFormat", "upstream", "az", "us-east-1a", "enforceZoneAffinity", "true", "enableTagging", "false",
			"directoryPerms", "0775", ParamPVName, "pv1", ParamPVCName, "c1", ParamPVCNamespace, "ns1"),
			with(func(p *Params) {
				p.UID, p.GID, p.GIDRangeStart, p.GIDRangeEnd = u32(1000), u32(0), 1, 4294967295
				p.BasePath, p.SubPathPattern, p.SubPathPatternSet, p.EnsureUniqueDirectory, p.ReuseAccessPoint = "/dyn", "${.PVC.namespace}/${.PVC.name}", true, false, true
				p.ReuseTokenFormat, p.AZ, p.EnforceZoneAffinity, p.EnableTagging, p.DirectoryPerms = TokenUpstream, "us-east-1a", true, false, "0775"
				p.PVName, p.PVCName, p.PVCNamespace = "pv1", "c1", "ns1"
			})},
		{"secret ref", base("fileSystemId", "<delete>", "fileSystemIdSecretRef", "kube-system/efs/fsid"),
			with(func(p *Params) {
				p.FileSystemID, p.FileSystemIDSecretRef = "", &ObjectRef{"kube-system", "efs", "fsid"}
			})},
		{"root basePath", base("basePath", "/"), defaults},
		// Upstream accepts 3 or 4 octal digits (EFS does): setgid and sticky bits included.
		{"perms setgid", base("directoryPerms", "2775"), with(func(p *Params) { p.DirectoryPerms = "2775" })},
		{"perms sticky", base("directoryPerms", "1777"), with(func(p *Params) { p.DirectoryPerms = "1777" })},
		{"perms 0755", base("directoryPerms", "0755"), with(func(p *Params) { p.DirectoryPerms = "0755" })},
		{"az by zone ID", base("az", "use1-az1"), with(func(p *Params) { p.AZ = "use1-az1" })},
		{"az by local zone ID", base("az", "usw2-lax1-az1"), with(func(p *Params) { p.AZ = "usw2-lax1-az1" })},
		// Upstream trims the file system source and counts a blank one as not given (filesystem_id_finder.go,
		// kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9).
		{"fileSystemId padded", base("fileSystemId", " fs-0123abcd\t"), defaults},
		{"fileSystemId blank beside a ref", base("fileSystemId", " ", "fileSystemIdConfigRef", "kube-system/efs/fsid"),
			with(func(p *Params) {
				p.FileSystemID, p.FileSystemIDConfigRef = "", &ObjectRef{"kube-system", "efs", "fsid"}
			})},
		// az is read only across accounts (CheckAZ, where it is used); directoryPerms only when creating.
		{"az not checked here", base("az", "Zone A"), with(func(p *Params) { p.AZ = "Zone A" })},
		{"perms absent", base("directoryPerms", "<delete>"), with(func(p *Params) { p.DirectoryPerms = "" })},
		// Upstream ignores keys it does not read (fstype from other drivers' examples): accepted and listed.
		{"unknown keys", base("fstype", "ext4", "gidRangeMax", "1"), with(func(p *Params) { p.Unknown = []string{"fstype", "gidRangeMax"} })},
		// Upstream's ParseBool fallback: anything that is not a boolean counts as true.
		{"ensureUniqueDirectory not a bool", base("ensureUniqueDirectory", "yes"), with(func(p *Params) {
			p.Lenient = []string{`ensureUniqueDirectory "yes" is not true or false: counted as true, as upstream does`}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseParams(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseParams = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCheckAZ(t *testing.T) {
	for _, ok := range []string{"us-east-1a", "use1-az1", "usw2-lax1-az1"} {
		if err := CheckAZ(ok); err != nil {
			t.Errorf("CheckAZ(%q) = %v", ok, err)
		}
	}
	err := CheckAZ("Zone A")
	if err == nil || !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("CheckAZ(Zone A) = %v, want ErrInvalidParameter", err)
	}
	for _, s := range []string{"az", `"Zone A"`, "us-east-1a", "use1-az1"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not name %s", err, s)
		}
	}
}

func FuzzParseParams(f *testing.F) {
	f.Add("subPathPattern", "${.PVC.name}/x", "basePath", "/a")
	f.Add("gidRangeStart", "1", "gidRangeEnd", "2")
	f.Add("uid", "0", "ensureUniqueDirectory", "false")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		in := base(k1, v1, k2, v2, ParamPVName, "pvc-1", ParamPVCName, "claim", ParamPVCNamespace, "ns")
		in2 := maps.Clone(in)
		p, err := ParseParams(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("error %v does not wrap ErrInvalidParameter", err)
			}
			return
		}
		if !maps.Equal(in, in2) {
			t.Fatal("ParseParams modified its input")
		}
		if p.GIDRangeEnd <= p.GIDRangeStart {
			t.Fatalf("accepted empty range %d..%d", p.GIDRangeStart, p.GIDRangeEnd)
		}
		dir, err := RootDir(p, "pvc-1")
		if err != nil {
			return
		}
		checkRootDir(t, dir)
	})
}

func checkRootDir(t *testing.T, dir string) {
	t.Helper()
	if dir == "" || dir == "/" || !strings.HasPrefix(dir, "/") || strings.Contains(dir, "//") {
		t.Fatalf("bad root dir %q", dir)
	}
	for _, e := range strings.Split(dir[1:], "/") {
		if e == ".." || e == "." || e == "" {
			t.Fatalf("root dir %q has element %q", dir, e)
		}
	}
}

func TestParseSecrets(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]string
		want    CrossAccount
		wantErr string
	}{
		{"none", nil, CrossAccount{}, ""},
		{"role", map[string]string{"awsRoleArn": "arn:aws:iam::123456789012:role/efs", "externalId": "s3cr3t", "crossaccount": "true"},
			CrossAccount{RoleARN: "arn:aws:iam::123456789012:role/efs", ExternalID: "s3cr3t", DNSByAZID: true}, ""},
		{"bad arn", map[string]string{"awsRoleArn": "s3cr3t-role"}, CrossAccount{}, `awsRoleArn: the value is not a role ARN: want arn:aws:iam::`},
		// Upstream ignores externalId without awsRoleArn.
		{"external id alone", map[string]string{"externalId": "s3cr3t"}, CrossAccount{}, ""},
		{"bad bool", map[string]string{"crossaccount": "s3cr3t"}, CrossAccount{}, `crossaccount: the value is not a boolean: want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSecrets(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("err = %v, want %q without the secret's value", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
