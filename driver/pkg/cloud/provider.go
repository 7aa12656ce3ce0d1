package cloud

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"k8s.io/klog/v2"
)

// Options configure a Provider.
type Options struct {
	// Region is the AWS region of the file systems (required).
	Region string
	// Endpoint overrides every service endpoint (tests: a fakeaws URL). Empty: the SDK's resolution, which
	// honours AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>.
	Endpoint string
	// Retry tunes the retryers.
	Retry RetryOptions
	// Observer receives API metrics; nil for none.
	Observer Observer
	// RoleSessionName names assumed-role sessions; "" means efs-csi-driver.
	RoleSessionName string
}

// Provider hands out Clouds: the driver's own, and one per cross-account role and external ID, cached for the
// life of the process so that credentials (refreshed by aws.CredentialsCache before they expire) and adaptive
// retry state survive between requests.
type Provider struct {
	base   aws.Config
	opts   Options
	own    *Cloud
	mu     sync.Mutex
	byRole map[roleKey]*Cloud

	// ec2Endpoint is resolved once: cross-account Clouds use the same endpoints with other credentials.
	ec2Endpoint string
}

type roleKey struct{ roleARN, externalID string }

// NewProvider loads the SDK configuration (environment, shared config, web identity, IMDS credentials) for
// opts.Region.
func NewProvider(ctx context.Context, opts Options) (*Provider, error) {
	if opts.Region == "" {
		return nil, errors.New("AWS region is empty: set --region or AWS_REGION, or run where instance metadata is reachable")
	}
	if err := CheckFIPSRegion(opts.Region, os.Getenv); err != nil {
		return nil, err
	}
	if opts.RoleSessionName == "" {
		opts.RoleSessionName = "efs-csi-driver"
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(opts.Region))
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if opts.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(opts.Endpoint)
	}
	if opts.Observer != nil {
		cfg.APIOptions = append(cfg.APIOptions, addMetricsMiddleware(opts.Observer, time.Now))
	}
	ec2URL, err := ec2Endpoint(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("resolve the EC2 endpoint: %w", err)
	}
	p := &Provider{base: cfg, opts: opts, ec2Endpoint: ec2URL, byRole: map[roleKey]*Cloud{}}
	p.own = p.newCloud(cfg, "")
	return p, nil
}

func (p *Provider) newCloud(cfg aws.Config, key string) *Cloud {
	r := newRetryers(p.opts.Retry)
	return &Cloud{efs: efs.NewFromConfig(cfg), ec2: newEC2Query(cfg, p.ec2Endpoint, r.get, p.opts.Observer), retryers: r, Key: key}
}

// Own returns the Cloud of the driver's own credentials.
func (p *Provider) Own() *Cloud { return p.own }

// ForRole returns the Cloud acting as roleARN (with externalID when non-empty), creating it on first use. The
// AssumeRole call happens lazily on the first request and again shortly before the credentials expire.
func (p *Provider) ForRole(roleARN, externalID string) *Cloud {
	k := roleKey{roleARN, externalID}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.byRole[k]; ok {
		return c
	}
	stsClient := sts.NewFromConfig(p.base)
	creds := stscreds.NewAssumeRoleProvider(stsClient, roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = p.opts.RoleSessionName
		if externalID != "" {
			o.ExternalID = aws.String(externalID)
		}
	})
	cfg := p.base.Copy()
	cfg.Credentials = aws.NewCredentialsCache(creds)
	c := p.newCloud(cfg, roleARN)
	p.byRole[k] = c
	// The role ARN comes from a Secret: it is not logged.
	klog.V(2).InfoS("Created cross-account AWS client", "withExternalID", externalID != "")
	return c
}

// Ready checks that the driver's own credentials can be obtained (cached after the first success).
func (p *Provider) Ready(ctx context.Context) error {
	if _, err := p.base.Credentials.Retrieve(ctx); err != nil {
		return fmt.Errorf("AWS credentials: %w", err)
	}
	return nil
}
