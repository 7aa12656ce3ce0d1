package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// TestLostCreateReplyNeverDuplicatesGID: EFS creates an access point but the reply is lost (500 after the fact);
// two claims race on a range of 4 GIDs. The GID of the lost reply stays counted and the view is listed again, so
// no two access points ever share a GID: the fifth claim finds the range full, and the lost claim's retry adopts
// its access point.
func TestLostCreateReplyNeverDuplicatesGID(t *testing.T) {
	e := newEnv(t, envOpts{})
	p, err := cloud.NewProvider(t.Context(), cloud.Options{Region: "us-east-1", Endpoint: e.aws.URL(),
		Retry: cloud.RetryOptions{MaxAttempts: 1}}) // the SDK does not heal the lost reply by retrying
	if err != nil {
		t.Fatal(err)
	}
	e.ctrl.SetClouds(p)
	params := e.params("gidRangeStart", "50000", "gidRangeEnd", "50003")
	e.aws.LoseReplies("CreateAccessPoint", 1)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, name := range []string{"pvc-a", "pvc-b"} {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = e.create(t, name, params) }()
	}
	wg.Wait()
	lost := ""
	for i, name := range []string{"pvc-a", "pvc-b"} {
		if errs[i] != nil {
			if status.Code(errs[i]) != codes.Unavailable || lost != "" {
				t.Fatalf("%s: %v; want exactly one Unavailable (the lost reply)", name, errs[i])
			}
			lost = name
		}
	}
	if lost == "" {
		t.Fatal("no reply was lost")
	}
	// Before the lost claim is retried, the access point EFS made for it already holds a GID: the range has room
	// for two more claims only.
	for _, name := range []string{"pvc-c", "pvc-d"} {
		if _, err := e.create(t, name, params); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	_, err = e.create(t, "pvc-e", params)
	wantCode(t, err, codes.ResourceExhausted, "no free GID")
	// The retry of the lost claim adopts its access point.
	if _, err := e.create(t, lost, params); err != nil {
		t.Fatalf("retry of %s: %v", lost, err)
	}
	aps := e.aws.AccessPoints(e.fsID)
	seen := map[int64]string{}
	for _, ap := range aps {
		if other, dup := seen[ap.PosixUser.Gid]; dup {
			t.Errorf("access points %s and %s share GID %d", other, ap.AccessPointId, ap.PosixUser.Gid)
		}
		seen[ap.PosixUser.Gid] = ap.AccessPointId
	}
	if len(aps) != 4 {
		t.Errorf("%d access points, want 4", len(aps))
	}
}

// TestReuseFindsUpstreamTokenAccessPoint: an access point the upstream driver made for a reuseAccessPoint claim
// carries the client token sha256(PVC name) (upstream controller.go get64LenHash). With the default token format
// the driver still finds and reuses it instead of creating a second access point.
func TestReuseFindsUpstreamTokenAccessPoint(t *testing.T) {
	e := newEnv(t, envOpts{})
	sum := sha256.Sum256([]byte("shared-data"))
	upstreamToken := hex.EncodeToString(sum[:])
	made := e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, ClientToken: upstreamToken,
		PosixUser: &fakeaws.PosixUser{Uid: 50007, Gid: 50007},
		RootDirectory: fakeaws.RootDirectory{Path: "/pvc-1234-6f1c0f5e-3a52-4f8e-9b1e-0c5d2d7b8a11",
			CreationInfo: &fakeaws.CreationInfo{OwnerUid: 50007, OwnerGid: 50007, Permissions: "700"}}})
	vol, err := e.create(t, "pvc-new-cluster", e.params("reuseAccessPoint", "true", scparams.ParamPVCName, "shared-data"))
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := volume.ParseHandle(vol.GetVolumeId()); h.AccessPointID != made {
		t.Fatalf("volume %s, want the upstream access point %s", vol.GetVolumeId(), made)
	}
	if n := len(e.aws.AccessPoints(e.fsID)); n != 1 {
		t.Fatalf("%d access points, want the one reused", n)
	}
	// Its GID is counted: the next allocation does not hand out 50007 again.
	if _, err := e.create(t, "pvc-x", e.params("gidRangeStart", "50007", "gidRangeEnd", "50008")); err != nil {
		t.Fatal(err)
	}
	for _, ap := range e.aws.AccessPoints(e.fsID) {
		if ap.AccessPointId != made && ap.PosixUser.Gid == 50007 {
			t.Fatal("GID 50007 of the reused access point handed out again")
		}
	}
}

// TestSameNameDifferentParametersNamesTheField: CSI asks AlreadyExists when a volume name is reused with other
// parameters; the message names the property of the existing access point that differs.
func TestSameNameDifferentParametersNamesTheField(t *testing.T) {
	e := newEnv(t, envOpts{tags: map[string]string{"team": "storage"}})
	if _, err := e.create(t, "pvc-1", e.params("uid", "1000", "gid", "2000")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		params map[string]string
		want   string
	}{
		{"root directory", e.params("uid", "1000", "gid", "2000", "basePath", "/other"), "root directory"},
		{"pattern", e.params("uid", "1000", "gid", "2000", "subPathPattern", "x", "ensureUniqueDirectory", "false"), "root directory"},
		{"uid", e.params("uid", "1001", "gid", "2000"), "POSIX user uid"},
		{"gid", e.params("uid", "1000", "gid", "2001"), "POSIX user gid"},
		{"permissions", e.params("uid", "1000", "gid", "2000", "directoryPerms", "0755"), "directoryPerms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.create(t, "pvc-1", tt.params)
			wantCode(t, err, codes.AlreadyExists, "differs in "+tt.want)
		})
	}
	// the same permissions written another way are the same
	if _, err := e.create(t, "pvc-1", e.params("uid", "1000", "gid", "2000", "directoryPerms", "0700")); err != nil {
		t.Fatalf("0700 vs 700: %v", err)
	}
	// a changed --tags value: the driver restarted with other tags
	e2 := NewController(ControllerConfig{Provisioner: provision.New(provision.Config{Tags: map[string]string{"team": "db"},
		GIDs: gidalloc.New(time.Minute, nil)})})
	e2.SetClouds(newProvider(t, e.aws, e.metrics))
	_, err := e2.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "pvc-1", Parameters: e.params("uid", "1000", "gid", "2000"),
		VolumeCapabilities: mountRWX, CapacityRange: &csi.CapacityRange{RequiredBytes: 5 << 30}})
	wantCode(t, err, codes.AlreadyExists, "differs in tag team")
}

// TestAPIMetricsAsUpstream: the AWS API metrics keep upstream's names and labels (service="efs", request=<the
// operation>) and count attempts: a call whose first reply is lost and whose retry succeeds gives two duration
// observations and one error with the AWS error code; throttled attempts are counted as throttles, not errors.
func TestAPIMetricsAsUpstream(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.aws.LoseReplies("CreateAccessPoint", 1)
	if _, err := e.create(t, "pvc-1", e.params("uid", "1", "gid", "1")); err != nil {
		t.Fatal(err)
	}
	e.aws.SetFault("DescribeFileSystems", fakeaws.Fault{ThrottleProbability: 1})
	_, _ = e.create(t, "pvc-2", e.params("uid", "1", "gid", "1", "enforceZoneAffinity", "true"))
	rec := httptest.NewRecorder()
	e.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`aws_efs_csi_api_request_duration_seconds_count{request="CreateAccessPoint",service="efs"} 2`,
		`aws_efs_csi_api_request_errors_total{code="InternalServerError",request="CreateAccessPoint",service="efs"} 1`,
		`aws_efs_csi_api_request_throttles_total{request="DescribeFileSystems",service="efs"} 3`,
		`aws_efs_csi_api_request_duration_seconds_count{request="DescribeFileSystems",service="efs"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, `aws_efs_csi_api_request_errors_total{code="ThrottlingException"`) {
		t.Error("throttled attempts counted as errors")
	}
	if t.Failed() {
		t.Log(body)
	}
}

// TestReuseMakesUpstreamsChecksOnly: a reuseAccessPoint claim shares an existing access point on purpose; upstream
// reuses it after validateExistingAccessPoint (root under basePath, a POSIX user, uid/gid as fixed or in the range:
// kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9 pkg/driver/controller.go), whatever
// its directory's owner and permissions. So does this driver: a class whose directoryPerms differ from those the
// access point was created with still reuses it.
func TestReuseMakesUpstreamsChecksOnly(t *testing.T) {
	e := newEnv(t, envOpts{})
	made := e.aws.AddAccessPoint(fakeaws.AccessPoint{FileSystemId: e.fsID, ClientToken: scparams.UpstreamToken("shared"),
		PosixUser:     &fakeaws.PosixUser{Uid: 50001, Gid: 50001},
		RootDirectory: fakeaws.RootDirectory{Path: "/shared", CreationInfo: &fakeaws.CreationInfo{OwnerUid: 0, OwnerGid: 0, Permissions: "755"}}})
	vol, err := e.create(t, "pvc-reuse", e.params("reuseAccessPoint", "true", scparams.ParamPVCName, "shared", "directoryPerms", "700"))
	if err != nil {
		t.Fatalf("reuse of an access point with other owner and permissions: %v", err)
	}
	if h, _ := volume.ParseHandle(vol.GetVolumeId()); h.AccessPointID != made {
		t.Fatalf("volume %s, want %s", vol.GetVolumeId(), made)
	}
	// What upstream refuses is still refused.
	_, err = e.create(t, "pvc-reuse-2", e.params("reuseAccessPoint", "true", scparams.ParamPVCName, "shared", "gid", "7"))
	wantCode(t, err, codes.AlreadyExists, "gid")
}
