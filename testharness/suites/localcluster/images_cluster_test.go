//go:build cluster

package localcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestProjectImagesRun loads the images `go tool mage test` built (the release's efs-utils base, driver and
// operator images on the Debian root standing in for RHEL 9, and the driver image for the cluster) and runs them
// as pods: the driver prints its version, mount.efs runs on a read-only root file system from the shipped
// bytecode, the operator prints its version, the driver for the cluster has the stand-in only in place of
// mount.nfs4, and a CA bundle mounted the way OpenShift's operators mount the trusted CA ConfigMap is the only
// thing OpenSSL, Python's ssl, certifi (botocore) and Go's crypto/x509 trust.
func TestProjectImagesRun(t *testing.T) {
	needHost(t)
	imgs, err := ReadProjectImages(os.Getenv(ImagesDirEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c, kube := startCluster(t)
	if _, err := c.LoadProjectImages(ctx, os.Getenv(ImagesDirEnv), testWriter{t}); err != nil {
		t.Fatalf("loading the project's images: %v", err)
	}
	checkImagesInContainerd(t, c, imgs)

	driver := imgs.Driver
	if driver.Reference == "" {
		t.Logf("no driver image for the cluster (the mount.nfs4 stand-in %s is not in this tree): checking the release driver image", "driver/test/standins/mount-nfs4-standin")
		driver = imgs.ReleaseDriver
	}
	version := imgs.ReleaseDriver.Reference[strings.LastIndex(imgs.ReleaseDriver.Reference, ":")+1:]
	opVersion := imgs.Operator.Reference[strings.LastIndex(imgs.Operator.Reference, ":")+1:]
	readOnly := &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true)}
	caMount := corev1.VolumeMount{Name: "ca", MountPath: "/etc/pki/ca-trust/extracted/pem", ReadOnly: true}
	checkDir := t.TempDir()
	if _, err := buildProgram(ctx, checkDir, harnessPackage+"/gotrust", "gotrust", testWriter{t}); err != nil {
		t.Fatal(err)
	}
	caPEM := testCA(t)
	if _, err := kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "trusted-ca-bundle"}, Data: map[string]string{"ca-bundle.crt": caPEM},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	type check struct {
		container corev1.Container
		want      []string
		wantNot   []string
	}
	pods := map[string][]check{
		"driver-version": {{
			container: corev1.Container{Image: imgs.ReleaseDriver.Reference, Args: []string{"--version"}},
			want:      []string{`"driverVersion": "` + version + `"`},
		}, {
			container: corev1.Container{Image: driver.Reference, Args: []string{"--version"}},
			want:      []string{`"driverVersion": "` + version + `"`},
		}},
		"mount-efs": {{
			container: corev1.Container{Image: driver.Reference, Command: []string{"/sbin/mount.efs", "--version"}, SecurityContext: readOnly},
			want:      []string{"/sbin/mount.efs Version: 1.36"},
		}, {
			// -v reports where each module's code object comes from, and any bytecode it could not write.
			container: corev1.Container{Image: driver.Reference, Command: []string{"python3", "-v", "/sbin/mount.efs", "--version"}, SecurityContext: readOnly},
			want:      []string{"code object from '/usr/lib/aws-efs-utils/efs_utils/__pycache__/cli.cpython-", "code object from '/usr/lib/aws-efs-utils/efs_utils/__pycache__/options.cpython-"},
			wantNot:   []string{"could not create '/usr/lib/aws-efs-utils", "wrote '/usr/lib/aws-efs-utils"},
		}},
		"operator-version": {{
			container: corev1.Container{Image: imgs.Operator.Reference, Args: []string{"--version"}, SecurityContext: readOnly},
			want:      []string{"aws-efs-csi-driver-operator version=" + opVersion},
		}, {
			container: corev1.Container{Image: imgs.Operator.Reference, Args: []string{"start", "--help"}, SecurityContext: readOnly},
			want:      []string{"--kubeconfig"},
		}},
		"trust-store": {{
			container: corev1.Container{
				Image: driver.Reference, SecurityContext: readOnly,
				Command: []string{"python3", "-c", trustStoreScript},
				// As library-go's InjectTrustedCAIntoContainers mounts the trusted CA bundle ConfigMap.
				VolumeMounts: []corev1.VolumeMount{caMount},
			},
			want: []string{
				"ssl default CAs: ['aws-efs-csi cluster test CA']",
				"same /etc/ssl/certs/ca-certificates.crt", "same /etc/pki/tls/certs/ca-bundle.crt",
				"same /etc/pki/tls/cert.pem", "same /usr/lib/ssl/cert.pem", "same certifi", "same botocore",
				"certificate files: ['ca-bundle.crt', 'ca-certificates.crt']",
			},
		}, {
			// Go's crypto/x509, as the driver uses it, in the driver image's root.
			container: corev1.Container{
				Image: driver.Reference, SecurityContext: readOnly,
				Command:      []string{"/check/gotrust", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"},
				VolumeMounts: []corev1.VolumeMount{caMount, {Name: "check", MountPath: "/check", ReadOnly: true}},
			},
			want: []string{"go system roots are exactly /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem: true"},
		}},
	}
	if imgs.Driver.Reference != "" {
		pods["mount-helper"] = []check{{
			container: corev1.Container{Image: imgs.Driver.Reference, Command: []string{"stat", "-c", "%F %a %n", "/sbin/mount.nfs4", "/sbin/mount.nfs"}},
			want:      []string{"regular file 755 /sbin/mount.nfs4", "regular file 4755 /sbin/mount.nfs"},
		}}
	}
	for name, checks := range pods {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Volumes: []corev1.Volume{{
				Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "trusted-ca-bundle"},
					Items:                []corev1.KeyToPath{{Key: "ca-bundle.crt", Path: "tls-ca-bundle.pem"}},
				}},
			}, {
				Name: "check", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: checkDir}},
			}}},
		}
		for i, ch := range checks {
			ch.container.Name = name + "-" + string(rune('a'+i))
			ch.container.ImagePullPolicy = corev1.PullNever
			pod.Spec.Containers = append(pod.Spec.Containers, ch.container)
		}
		if _, err := kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, checks := range pods {
		phase := waitDone(t, kube, name)
		for i, ch := range checks {
			container := name + "-" + string(rune('a'+i))
			logs, _ := kube.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
			cmd := strings.Join(append(append([]string{}, ch.container.Command...), ch.container.Args...), " ")
			if phase != corev1.PodSucceeded {
				t.Errorf("pod %s (%s: %s) ended %s; log:\n%s", name, ch.container.Image, cmd, phase, logs)
				continue
			}
			for _, w := range ch.want {
				if !strings.Contains(string(logs), w) {
					t.Errorf("%s (%s: %s) printed no %q; log:\n%s", container, ch.container.Image, cmd, w, tail(string(logs), 40))
				}
			}
			for _, w := range ch.wantNot {
				if strings.Contains(string(logs), w) {
					t.Errorf("%s (%s: %s) printed %q; log:\n%s", container, ch.container.Image, cmd, w, tail(string(logs), 40))
				}
			}
		}
	}
}

// trustStoreScript prints what each trust path of the image leads to, while the cluster CA bundle is mounted.
const trustStoreScript = `
import os, ssl, certifi, botocore.httpsession
mounted = open("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem").read()
ctx = ssl.create_default_context()
print("ssl default CAs: %s" % sorted(dict(x[0] for x in c["subject"]).get("commonName") for c in ctx.get_ca_certs()))
for p in ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/pki/tls/cert.pem", "/usr/lib/ssl/cert.pem"]:
    print(("same " if open(p).read() == mounted else "DIFFERENT ") + p)
print(("same " if open(certifi.where()).read() == mounted else "DIFFERENT ") + "certifi")
print(("same " if open(botocore.httpsession.where()).read() == mounted else "DIFFERENT ") + "botocore")
print("certificate files: %s" % sorted(os.listdir("/etc/ssl/certs")))
`

// checkImagesInContainerd asks the CRI for each image by its pinned reference (repository@index digest), as a
// bundle names it, and checks the labels of its config in the layout it was loaded from.
func checkImagesInContainerd(t *testing.T, c *Cluster, imgs ProjectImages) {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+c.state.ContainerdSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	images := runtimeapi.NewImageServiceClient(conn)
	for _, img := range imgs.All() {
		for _, ref := range []string{img.Reference, img.Pinned()} {
			st, err := images.ImageStatus(t.Context(), &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
			if err != nil || st.Image == nil {
				t.Errorf("containerd has no image %s: %v", ref, err)
			}
		}
		p, err := layout.FromPath(img.Layout)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := p.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		inner, err := idx.ImageIndex(img.Digest)
		if err != nil {
			t.Fatal(err)
		}
		im, _ := inner.IndexManifest()
		image, err := inner.Image(im.Manifests[0].Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := image.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		tag := img.Reference[strings.LastIndex(img.Reference, ":")+1:]
		name := strings.TrimSuffix(img.Reference[len(ProjectImageRepository)+1:strings.LastIndex(img.Reference, ":")], "-for-cluster")
		l := cf.Config.Labels
		if l["name"] != name || l["vendor"] != "Red Hat, Inc." || l["version"] != tag ||
			l["org.opencontainers.image.source"] != "https://github.com/openshift/aws-efs-csi" || l["com.redhat.component"] != name+"-container" {
			t.Errorf("%s labels %v; want ours (name %s, version %s, vendor, source, component)", img.Reference, l, name, tag)
		}
	}
}

// waitDone waits for a pod to succeed or fail.
func waitDone(t *testing.T, kube kubernetes.Interface, name string) corev1.PodPhase {
	t.Helper()
	var phase corev1.PodPhase
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	if err != nil {
		t.Errorf("pod %s: phase %s: %v", name, phase, err)
	}
	return phase
}

// testCA is a self-signed CA certificate, PEM.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aws-efs-csi cluster test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func ptr[T any](v T) *T { return &v }
