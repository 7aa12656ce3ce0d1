package nodeinfo

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
)

// Node labels read on the Kubernetes fallback.
const (
	LabelZone   = "topology.kubernetes.io/zone"
	LabelRegion = "topology.kubernetes.io/region"
	// LabelZoneID is set by the AWS cloud provider on EKS and by some installers; optional.
	LabelZoneID = "topology.k8s.aws/zone-id"
)

// instanceIDPattern finds the EC2 instance ID in a providerID such as aws:///us-east-1a/i-0123456789abcdef0.
var instanceIDPattern = regexp.MustCompile(`(?:^|/)(i-[0-9a-f]{8,17})$`)

// Info is what the node knows about itself.
type Info struct {
	InstanceID, Region, Zone, ZoneID string
	// Source is "imds" or "kubernetes".
	Source string
}

// NodeGetter reads a Node; CoreV1().Nodes() of a client-go clientset satisfies it.
type NodeGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
}

// Input are the sources Resolve may use.
type Input struct {
	// IMDS is the instance metadata client; nil skips IMDS.
	IMDS *imds.Client
	// NodeName is CSI_NODE_NAME; Nodes reads it. Either empty skips the Kubernetes fallback.
	NodeName string
	Nodes    NodeGetter
	// Region and Zone (--region, --availability-zone) win over what the sources say.
	Region, Zone string
}

// Resolve asks IMDS first and the Kubernetes Node second; it fails naming both when neither answers.
func Resolve(ctx context.Context, in Input) (Info, error) {
	var imdsErr error = errors.New("no instance metadata client")
	if in.IMDS != nil {
		md, err := cloud.ResolveMetadata(ctx, cloud.MetadataInput{}, in.IMDS)
		if err == nil && md.Source == "imds" && md.InstanceID != "" {
			return overlay(Info{InstanceID: md.InstanceID, Region: md.Region, Zone: md.Zone, ZoneID: md.ZoneID, Source: "imds"}, in), nil
		}
		imdsErr = fmt.Errorf("instance metadata not reachable: %w", orNoID(err))
	}
	if in.NodeName == "" || in.Nodes == nil {
		return Info{}, fmt.Errorf("cannot identify the node: %w; and CSI_NODE_NAME is not set (or there is no Kubernetes client), so the Node object cannot be read", imdsErr)
	}
	node, err := in.Nodes.Get(ctx, in.NodeName, metav1.GetOptions{})
	if err != nil {
		return Info{}, fmt.Errorf("cannot identify the node: %w; get Node %q: %w", imdsErr, in.NodeName, err)
	}
	info, err := FromNode(node)
	if err != nil {
		return Info{}, fmt.Errorf("cannot identify the node: %w; %w", imdsErr, err)
	}
	klog.V(2).InfoS("Node identified from the Kubernetes Node object", "node", in.NodeName, "instanceID", info.InstanceID, "zone", info.Zone)
	return overlay(info, in), nil
}

func orNoID(err error) error {
	if err == nil {
		return errors.New("no instance ID")
	}
	return err
}

func overlay(info Info, in Input) Info {
	if in.Region != "" {
		info.Region = in.Region
	}
	if in.Zone != "" && in.Zone != info.Zone {
		info.Zone, info.ZoneID = in.Zone, ""
	}
	return info
}

// FromNode reads the instance ID from spec.providerID and region and zone from the topology labels.
func FromNode(node *corev1.Node) (Info, error) {
	m := instanceIDPattern.FindStringSubmatch(node.Spec.ProviderID)
	if m == nil {
		return Info{}, fmt.Errorf("node %s: spec.providerID %q: want aws:///<zone>/i-<hex>", node.Name, node.Spec.ProviderID)
	}
	return Info{InstanceID: m[1], Region: node.Labels[LabelRegion], Zone: node.Labels[LabelZone], ZoneID: node.Labels[LabelZoneID],
		Source: "kubernetes"}, nil
}
