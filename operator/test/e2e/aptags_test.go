package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/aws-efs-csi/operator/pkg/aptags"
)

const (
	tagsFS   = "fs-0123456789abcdef0"
	tagsRole = "arn:aws:iam::123456789012:role/e2e-openshift-cluster-csi-drivers-aws-efs-cloud-cre"
)

// TestAccessPointTagsOnHyperShift runs the access-point tags controller against fakeaws (EFS and STS over HTTPS,
// reached through the Infrastructure's custom endpoints): nothing happens on a standalone cluster; on a HyperShift
// guest every access point PV is tagged with the Infrastructure's resource tags using the controller role and the
// operator's web identity token, and recorded; a changed tag set is applied again (added and overwritten, never
// removed); a PV whose access point is gone gets a Warning event and does not stop the others; the steady state
// writes nothing.
func TestAccessPointTagsOnHyperShift(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	dir := t.TempDir()
	seed := map[string]any{"fileSystems": []any{map[string]any{"FileSystemId": tagsFS, "accessPoints": []any{
		map[string]any{"AccessPointId": "fsap-0000000000000000a", "RootDirectory": map[string]any{"Path": "/a"}, "Tags": []any{map[string]any{"Key": "owner", "Value": "app-a"}}},
		map[string]any{"AccessPointId": "fsap-0000000000000000b", "RootDirectory": map[string]any{"Path": "/b"}},
	}}}}
	seedFile := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seedFile, ok(json.Marshal(seed))(t), 0o600); err != nil {
		t.Fatal(err)
	}
	awsURL := startFakeAWS(t, "--seed-file="+seedFile, "--role="+tagsRole)

	// Custom endpoints must be https (the Infrastructure API says so): fakeaws behind a TLS proxy, trusted through
	// AWS_CA_BUNDLE as a private endpoint's CA would be.
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(ok(url.Parse(awsURL))(t)))
	t.Cleanup(proxy.Close)
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", caFile)
	e.setServiceEndpoints(t, []configv1.AWSServiceEndpoint{{Name: "elasticfilesystem", URL: proxy.URL}, {Name: "sts", URL: proxy.URL}})

	// The controller role as the cloud-credential operator writes it in STS mode, and the operator's own token.
	ok(e.kube.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: aptags.CredentialsSecret, Namespace: namespace},
		Data: map[string][]byte{"credentials": []byte("[default]\nsts_regional_endpoints = regional\nrole_arn = " + tagsRole +
			"\nweb_identity_token_file = /var/run/secrets/openshift/serviceaccount/token\n")}}, metav1.CreateOptions{}))(t)
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZTJlIn0.c2ln"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, handle := range map[string]string{"pv-a": tagsFS + "::fsap-0000000000000000a", "pv-b": tagsFS + "::fsap-0000000000000000b",
		"pv-gone": tagsFS + "::fsap-00000000000000dead", "pv-fs-only": tagsFS} {
		e.efsPV(t, name, handle)
	}

	cfg := testConfig()
	cfg.WebIdentityTokenFile = token
	op := e.startOperator(cfg)
	e.createClusterCSIDriver(opv1.Managed)
	eventually(t, 2*time.Minute, "every driver object", e.driverObjectsExist)

	// A standalone cluster: OpenShift's operator leaves access points to the driver's --tags.
	// Bounded, as "not tagged" has no event to wait on: on a standalone cluster the controller's sync returns
	// before any AWS call (aptags.controller.state). It syncs on its Infrastructure informer's first event when it
	// starts, with the controllers that made the driver objects above, so 5 s after those exist covers that first
	// sync with room for a busy machine (a sync that tagged would make one TagResource call, milliseconds here).
	time.Sleep(5 * time.Second)
	if tags := apTags(t, awsURL, "fsap-0000000000000000a"); tags["team"] != "" {
		t.Fatalf("access point tagged on a standalone cluster: %v", tags)
	}

	infra := ok(e.conf.ConfigV1().Infrastructures().Get(ctx, "cluster", metav1.GetOptions{}))(t)
	infra.Labels = map[string]string{aptags.HyperShiftLabel: "true"}
	ok(e.conf.ConfigV1().Infrastructures().Update(ctx, infra, metav1.UpdateOptions{}))(t)
	want := map[string]string{"team": "storage"}
	eventually(t, 2*time.Minute, "access points tagged and PVs recorded", func(ctx context.Context) error {
		return e.tagged(ctx, awsURL, want, []configv1.AWSResourceTag{{Key: "team", Value: "storage"}})
	})
	eventually(t, time.Minute, "a Warning event for the PV whose access point is gone", func(context.Context) error {
		for _, ev := range op.recorder.(events.InMemoryRecorder).Events() {
			if ev.Reason == "EFSAccessPointTagsUpdateFailed" && ev.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("no EFSAccessPointTagsUpdateFailed event")
	})
	if tags := apTags(t, awsURL, "fsap-0000000000000000a"); tags["owner"] != "app-a" {
		t.Fatalf("tags %v lost the access point's own tag", tags)
	}

	// New tags: overwritten and added, the access point's own tag kept.
	infra = ok(e.conf.ConfigV1().Infrastructures().Get(ctx, "cluster", metav1.GetOptions{}))(t)
	newTags := []configv1.AWSResourceTag{{Key: "team", Value: "files"}, {Key: "env", Value: "prod"}}
	infra.Status.PlatformStatus.AWS.ResourceTags = newTags
	ok(e.conf.ConfigV1().Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{}))(t)
	eventually(t, 2*time.Minute, "access points tagged again", func(ctx context.Context) error {
		return e.tagged(ctx, awsURL, map[string]string{"team": "files", "env": "prod", "owner": "app-a"}, newTags)
	})

	// Steady state: the tagged PVs are not written again.
	before := map[string]string{}
	for _, n := range []string{"pv-a", "pv-b"} {
		before[n] = ok(e.kube.CoreV1().PersistentVolumes().Get(ctx, n, metav1.GetOptions{}))(t).ResourceVersion
	}
	// Bounded, as "not written again" has no event to wait on: longer than the operator's resync in these tests
	// (resync), so the periodic syncs of the operator's controllers, and any sync of this one they trigger through
	// its Infrastructure informer, fall in the window; this controller's own periodic resync (30 min) is not waited for.
	time.Sleep(resync + 5*time.Second)
	for n, rv := range before {
		if got := ok(e.kube.CoreV1().PersistentVolumes().Get(ctx, n, metav1.GetOptions{}))(t).ResourceVersion; got != rv {
			t.Errorf("PV %s written again in the steady state", n)
		}
	}
	if _, found := ok(e.kube.CoreV1().PersistentVolumes().Get(ctx, "pv-fs-only", metav1.GetOptions{}))(t).Annotations[aptags.HashAnnotation]; found {
		t.Error("a PV without an access point was annotated")
	}
}

// efsPV creates a PV of the EFS driver with handle.
func (e *env) efsPV(t *testing.T, name, handle string) {
	t.Helper()
	ok(e.kube.CoreV1().PersistentVolumes().Create(t.Context(), &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: "efs.csi.aws.com", VolumeHandle: handle},
			},
		},
	}, metav1.CreateOptions{}))(t)
}

// tagged checks that both live access points carry want and that their PVs record the hash of infraTags.
func (e *env) tagged(ctx context.Context, awsURL string, want map[string]string, infraTags []configv1.AWSResourceTag) error {
	for pv, ap := range map[string]string{"pv-a": "fsap-0000000000000000a", "pv-b": "fsap-0000000000000000b"} {
		got := apTags(e.t, awsURL, ap)
		for k, v := range want {
			if k == "owner" && ap != "fsap-0000000000000000a" {
				continue
			}
			if got[k] != v {
				return fmt.Errorf("%s tags %v, want %v", ap, got, want)
			}
		}
		p, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if h := p.Annotations[aptags.HashAnnotation]; h != aptags.TagsHash(infraTags) {
			return fmt.Errorf("PV %s tags hash %q", pv, h)
		}
	}
	return nil
}

// apTags reads an access point's tags from fakeaws directly.
func apTags(t *testing.T, awsURL, ap string) map[string]string {
	t.Helper()
	client := efs.New(efs.Options{Region: "us-east-1", BaseEndpoint: aws.String(awsURL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIAE2ETEST0000000001", "secret", "")})
	out, err := client.DescribeAccessPoints(t.Context(), &efs.DescribeAccessPointsInput{AccessPointId: aws.String(ap)})
	if err != nil {
		t.Fatalf("DescribeAccessPoints %s: %v", ap, err)
	}
	tags := map[string]string{}
	for _, d := range out.AccessPoints {
		for _, tag := range d.Tags {
			tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
	}
	return tags
}
