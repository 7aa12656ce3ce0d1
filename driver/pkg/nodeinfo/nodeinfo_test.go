package nodeinfo

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

func node(name, providerID string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestResolveFromIMDS(t *testing.T) {
	s, err := fakeaws.Start(fakeaws.Options{InstanceZone: "us-east-1b", InstanceID: "i-0aaaabbbbccccdddd"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := imds.New(imds.Options{Endpoint: s.URL()})
	info, err := Resolve(t.Context(), Input{IMDS: client})
	if err != nil {
		t.Fatal(err)
	}
	want := Info{InstanceID: "i-0aaaabbbbccccdddd", Region: "us-east-1", Zone: "us-east-1b", ZoneID: "use1-az2", Source: "imds"}
	if info != want {
		t.Fatalf("Resolve = %+v, want %+v", info, want)
	}
	// --availability-zone overrides the zone (and drops the zone ID that belongs to the other zone)
	info, _ = Resolve(t.Context(), Input{IMDS: client, Zone: "us-east-1c"})
	if info.Zone != "us-east-1c" || info.ZoneID != "" {
		t.Fatalf("zone override: %+v", info)
	}
}

func TestResolveFromKubernetes(t *testing.T) {
	dead := imds.New(imds.Options{Endpoint: "http://127.0.0.1:9", Retryer: aws.NopRetryer{}}) // nothing listens on the discard port
	cs := fake.NewSimpleClientset(
		node("worker-a", "aws:///us-east-1a/i-0123456789abcdef0", map[string]string{LabelZone: "us-east-1a", LabelRegion: "us-east-1", LabelZoneID: "use1-az1"}),
		node("worker-b", "gce://project/zone/vm", nil),
	)
	cases := []struct {
		name, node string
		want       Info
		wantErr    string
	}{
		{name: "node with labels", node: "worker-a", want: Info{InstanceID: "i-0123456789abcdef0", Region: "us-east-1", Zone: "us-east-1a", ZoneID: "use1-az1", Source: "kubernetes"}},
		{name: "foreign provider", node: "worker-b", wantErr: `spec.providerID "gce://project/zone/vm": want aws:///<zone>/i-<hex>`},
		{name: "missing node", node: "worker-c", wantErr: `get Node "worker-c"`},
		{name: "no node name", node: "", wantErr: "CSI_NODE_NAME is not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Resolve(t.Context(), Input{IMDS: dead, NodeName: tc.node, Nodes: cs.CoreV1().Nodes()})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "instance metadata not reachable") {
					t.Fatalf("err = %v, want %q and the IMDS reason", err, tc.wantErr)
				}
				return
			}
			if err != nil || info != tc.want {
				t.Fatalf("Resolve = %+v, %v; want %+v", info, err, tc.want)
			}
		})
	}
}
