package driver

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/metrics"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// env is a controller served over a real unix socket, talking to fakeaws over HTTP.
type env struct {
	aws      *fakeaws.Server
	fsID     string
	ctrl     *Controller
	metrics  *metrics.Metrics
	identity csi.IdentityClient
	client   csi.ControllerClient
}

type envOpts struct {
	quota    int
	tags     map[string]string
	rootDir  provision.RootDirDeleter
	notReady bool
	events   ClaimWarner
	resolver FileSystemIDResolver
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEAWSTESTKEY01")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := fakeaws.Start(fakeaws.Options{AccessPointQuota: o.quota})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	e := &env{aws: s, fsID: s.AddFileSystem(fakeaws.FileSystem{}), metrics: metrics.New()}
	for _, z := range s.Options().Zones {
		s.AddMountTarget(e.fsID, z.Name, "")
	}
	e.ctrl = NewController(ControllerConfig{
		Provisioner: provision.New(provision.Config{Tags: o.tags, GIDs: gidalloc.New(time.Minute, nil)}),
		RootDir:     o.rootDir,
		Events:      o.events,
		Resolver:    o.resolver,
	})
	if !o.notReady {
		e.ctrl.SetClouds(newProvider(t, s, e.metrics))
	}
	sock := filepath.Join(t.TempDir(), "csi.sock")
	l, err := Listen("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Services{Identity: NewIdentity("v9.9.9", true), Controller: e.ctrl}, e.metrics)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, l) }()
	t.Cleanup(func() { cancel(); <-done })
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	e.identity, e.client = csi.NewIdentityClient(conn), csi.NewControllerClient(conn)
	return e
}

func newProvider(t *testing.T, s *fakeaws.Server, m *metrics.Metrics) *cloud.Provider {
	t.Helper()
	p, err := cloud.NewProvider(t.Context(), cloud.Options{Region: "us-east-1", Endpoint: s.URL(), Observer: m,
		Retry: cloud.RetryOptions{Adaptive: false, MaxAttempts: 3, MaxBackoff: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var mountRWX = []*csi.VolumeCapability{{
	AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
	AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
}}

func (e *env) params(kv ...string) map[string]string {
	m := map[string]string{"provisioningMode": "efs-ap", "fileSystemId": e.fsID, "directoryPerms": "700",
		scparams.ParamPVName: "pv-x", scparams.ParamPVCName: "claim", scparams.ParamPVCNamespace: "ns"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func (e *env) create(t *testing.T, name string, params map[string]string) (*csi.Volume, error) {
	t.Helper()
	resp, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: name, Parameters: params,
		VolumeCapabilities: mountRWX, CapacityRange: &csi.CapacityRange{RequiredBytes: 5 << 30}})
	return resp.GetVolume(), err
}

func wantCode(t *testing.T, err error, code codes.Code, substrings ...string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Fatalf("code = %s (%v), want %s", st.Code(), err, code)
	}
	for _, s := range substrings {
		if !contains(st.Message(), s) {
			t.Errorf("message %q does not contain %q", st.Message(), s)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// createReq is a CreateVolume request of a 5 GiB RWX volume.
func createReq(name string, params, secrets map[string]string) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{Name: name, Parameters: params, Secrets: secrets, VolumeCapabilities: mountRWX,
		CapacityRange: &csi.CapacityRange{RequiredBytes: 5 << 30}}
}
