package driver

import (
	"bytes"
	"flag"
	"fmt"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// captureLogs sends klog's output (every verbosity) to a buffer for the rest of the test.
func captureLogs(t *testing.T) *syncBuf {
	t.Helper()
	var buf syncBuf
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("v", "6")
	klog.SetOutput(&buf)
	t.Cleanup(func() {
		klog.Flush()
		_ = fs.Set("logtostderr", "true")
		_ = fs.Set("v", "0")
	})
	return &buf
}

// TestSecretValuesNeverShown: no value from a provisioner/deleter Secret, nor the value behind
// fileSystemIdSecretRef, appears in an error message or the log, whatever goes wrong: a malformed value, or AWS
// echoing the role ARN in an AssumeRole refusal.
func TestSecretValuesNeverShown(t *testing.T) {
	logs := captureLogs(t)
	e := newEnv(t, envOpts{})
	const marker = "s3cr3tMARKER"
	e.ctrl.cfg.Resolver = refs{fmt.Sprint(true, "kube-system", "efs", "fsid"): marker + "-not-an-fs"}
	notAllowed := "arn:aws:iam::210987654321:role/" + marker // fakeaws refuses AssumeRole of unknown roles
	tests := []struct {
		name    string
		params  map[string]string
		secrets map[string]string
		code    codes.Code
	}{
		{"malformed awsRoleArn", e.params(), map[string]string{"awsRoleArn": marker}, codes.InvalidArgument},
		{"malformed crossaccount", e.params(), map[string]string{"crossaccount": marker}, codes.InvalidArgument},
		{"AssumeRole refused", e.params(), map[string]string{"awsRoleArn": notAllowed, "externalId": marker + "-ext"}, codes.PermissionDenied},
		{"fileSystemIdSecretRef value", e.params("fileSystemId", "", "fileSystemIdSecretRef", "kube-system/efs/fsid"), nil, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.params["fileSystemId"] == "" {
				delete(tt.params, "fileSystemId")
			}
			_, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "pvc-s", Parameters: tt.params,
				VolumeCapabilities: mountRWX, Secrets: tt.secrets})
			wantCode(t, err, tt.code)
			if contains(err.Error(), marker) {
				t.Errorf("error shows a secret's value: %v", err)
			}
			_, err = e.client.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: e.fsID + "::fsap-0123456789abcdef0", Secrets: tt.secrets})
			if err != nil && contains(err.Error(), marker) {
				t.Errorf("DeleteVolume error shows a secret's value: %v", err)
			}
		})
	}
	klog.Flush()
	if bytes.Contains(logs.Bytes(), []byte(marker)) {
		t.Errorf("the log shows a secret's value:\n%s", logs.String())
	}
	if !bytes.Contains(logs.Bytes(), []byte("GRPC error")) {
		t.Errorf("log capture saw no GRPC errors; the check above proves nothing:\n%s", logs.String())
	}
}

// TestCreateVolumeFileSystemNotReadyIsUnavailable: EFS answers IncorrectFileSystemLifeCycleState while a file
// system is being created; that passes, so the provisioner must retry (Unavailable), not fail the claim.
func TestCreateVolumeFileSystemNotReadyIsUnavailable(t *testing.T) {
	e := newEnv(t, envOpts{})
	fsID := e.aws.AddFileSystem(fakeaws.FileSystem{LifeCycleState: "updating"})
	_, err := e.create(t, "pvc-1", e.params("fileSystemId", fsID, "uid", "1000", "gid", "1000"))
	wantCode(t, err, codes.Unavailable, "IncorrectFileSystemLifeCycleState")
}

// TestExternalIDWithoutRoleIsIgnored: upstream ignores externalId when there is no awsRoleArn.
func TestExternalIDWithoutRoleIsIgnored(t *testing.T) {
	e := newEnv(t, envOpts{})
	_, err := e.client.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "pvc-1", Parameters: e.params(),
		VolumeCapabilities: mountRWX, Secrets: map[string]string{"externalId": "abc"}})
	if err != nil {
		t.Fatalf("CreateVolume with externalId alone: %v", err)
	}
}

// syncBuf is a bytes.Buffer klog and the test can share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) Bytes() []byte               { s.mu.Lock(); defer s.mu.Unlock(); return bytes.Clone(s.b.Bytes()) }
func (s *syncBuf) String() string              { return string(s.Bytes()) }
