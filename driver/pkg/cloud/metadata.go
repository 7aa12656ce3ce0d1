package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"k8s.io/klog/v2"
)

// Metadata is where the driver runs.
type Metadata struct {
	Region string
	// Zone and ZoneID are the availability zone name and ID; empty when unknown (controller without IMDS).
	Zone, ZoneID string
	InstanceID   string
	// Source says where the values came from: "flags", "imds" or "environment".
	Source string
}

// MetadataInput holds what the operator configured; every set field wins over instance metadata.
type MetadataInput struct {
	// Region and Zone come from --region / --availability-zone.
	Region, Zone string
	// EnvRegion is AWS_REGION (or AWS_DEFAULT_REGION), the fallback when IMDS cannot be reached.
	EnvRegion string
	// Timeout bounds the IMDS probe; 0 means 3s.
	Timeout time.Duration
}

// imdsAPI lists the instance metadata calls the driver makes.
type imdsAPI interface {
	GetInstanceIdentityDocument(ctx context.Context, in *imds.GetInstanceIdentityDocumentInput, optFns ...func(*imds.Options)) (*imds.GetInstanceIdentityDocumentOutput, error)
	GetMetadata(ctx context.Context, in *imds.GetMetadataInput, optFns ...func(*imds.Options)) (*imds.GetMetadataOutput, error)
}

var _ imdsAPI = (*imds.Client)(nil)

// NewIMDSClient builds an instance metadata client; endpoint overrides the default (and
// AWS_EC2_METADATA_SERVICE_ENDPOINT), and AWS_EC2_METADATA_DISABLED=true turns it off.
func NewIMDSClient(ctx context.Context, endpoint string) (*imds.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration for IMDS: %w", err)
	}
	return imds.NewFromConfig(cfg, func(o *imds.Options) {
		if endpoint != "" {
			o.Endpoint = endpoint
		}
		o.Retryer = retry.AddWithMaxAttempts(retry.NewStandard(), 2)
	}), nil
}

// ResolveMetadata works out region and zone: flags first, then instance metadata, then the environment region.
// It fails only when no region can be found, naming the ways to give one.
func ResolveMetadata(ctx context.Context, in MetadataInput, client imdsAPI) (Metadata, error) {
	md := Metadata{Region: in.Region, Zone: in.Zone, Source: "flags"}
	if md.Region != "" && md.Zone != "" {
		return md, nil
	}
	timeout := in.Timeout
	if timeout == 0 {
		timeout = 3 * time.Second
	}
	fromIMDS, err := fromInstanceMetadata(ctx, client, timeout)
	if err == nil {
		md.Source = "imds"
		if md.Region == "" {
			md.Region = fromIMDS.Region
		}
		if md.Zone == "" {
			md.Zone, md.ZoneID = fromIMDS.Zone, fromIMDS.ZoneID
		}
		md.InstanceID = fromIMDS.InstanceID
		return md, nil
	}
	klog.V(2).InfoS("Instance metadata not reachable; using flags and environment", "err", err)
	if md.Region == "" {
		md.Region, md.Source = in.EnvRegion, "environment"
	}
	if md.Region == "" {
		return Metadata{}, fmt.Errorf("no AWS region: set --region or AWS_REGION (instance metadata: %w)", err)
	}
	return md, nil
}

func fromInstanceMetadata(ctx context.Context, client imdsAPI, timeout time.Duration) (Metadata, error) {
	if client == nil {
		return Metadata{}, errors.New("instance metadata client disabled")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	doc, err := client.GetInstanceIdentityDocument(ctx, &imds.GetInstanceIdentityDocumentInput{})
	if err != nil {
		return Metadata{}, fmt.Errorf("instance identity document: %w", err)
	}
	md := Metadata{Region: doc.Region, Zone: doc.AvailabilityZone, InstanceID: doc.InstanceID}
	out, err := client.GetMetadata(ctx, &imds.GetMetadataInput{Path: "placement/availability-zone-id"})
	if err == nil {
		b, rerr := io.ReadAll(io.LimitReader(out.Content, 256))
		_ = out.Content.Close()
		if rerr == nil {
			md.ZoneID = strings.TrimSpace(string(b))
		}
	}
	if md.Region == "" {
		return Metadata{}, errors.New("instance identity document has no region")
	}
	return md, nil
}
