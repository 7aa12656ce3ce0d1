package aptags

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	configv1 "github.com/openshift/api/config/v1"
	"gopkg.in/ini.v1"
	corev1 "k8s.io/api/core/v1"
)

// RoleSessionName names the STS sessions of the operator, as OpenShift's operator names them.
const RoleSessionName = "aws-efs-csi-driver-operator"

// Tagger is the one EFS call the controller makes.
type Tagger interface {
	TagResource(ctx context.Context, in *efs.TagResourceInput, opts ...func(*efs.Options)) (*efs.TagResourceOutput, error)
}

// identity is what an EFS client is built from; a change of any part builds a new client.
type identity struct {
	region, efsEndpoint, stsEndpoint string
	// roleARN and tokenFile: web identity; else accessKey and secretKey.
	roleARN, tokenFile, accessKey, secretKey string
}

// clients builds EFS clients and keeps the last one, whose credentials cache refreshes STS credentials before they
// expire.
type clients struct {
	mu   sync.Mutex
	id   identity
	efs  Tagger
	load func(ctx context.Context, optFns ...func(*awsconfig.LoadOptions) error) (aws.Config, error)
}

// identityFrom reads the controller role's credentials from the driver's Secret (the cloud-credential operator's
// "credentials" INI, [default] role_arn, or static keys) and the region and endpoints from infra. tokenFile is the
// operator's web identity token; when empty, the INI's web_identity_token_file is used.
func identityFrom(secret *corev1.Secret, infra *configv1.Infrastructure, tokenFile string) (identity, error) {
	platform := infra.Status.PlatformStatus.AWS
	id := identity{region: platform.Region}
	if id.region == "" {
		return id, fmt.Errorf("Infrastructure %q has no status.platformStatus.aws.region", infra.Name)
	}
	for _, ep := range platform.ServiceEndpoints {
		switch ep.Name {
		case "elasticfilesystem":
			id.efsEndpoint = ep.URL
		case "sts":
			id.stsEndpoint = ep.URL
		}
	}
	if data, ok := secret.Data["credentials"]; ok {
		f, err := ini.Load(data)
		if err != nil {
			return id, fmt.Errorf("Secret %s/%s key credentials: %w", secret.Namespace, secret.Name, err)
		}
		sec := f.Section("default")
		id.roleARN = sec.Key("role_arn").String()
		id.accessKey, id.secretKey = sec.Key("aws_access_key_id").String(), sec.Key("aws_secret_access_key").String()
		id.tokenFile = tokenFile
		if id.tokenFile == "" {
			id.tokenFile = sec.Key("web_identity_token_file").String()
		}
	} else {
		id.accessKey, id.secretKey = string(secret.Data["aws_access_key_id"]), string(secret.Data["aws_secret_access_key"])
	}
	switch {
	case id.roleARN != "" && id.tokenFile != "":
		id.accessKey, id.secretKey = "", ""
		return id, nil
	case id.roleARN != "":
		return id, fmt.Errorf("Secret %s/%s names role %s but the operator has no web identity token: set AWS_WEB_IDENTITY_TOKEN_FILE "+
			"(annotate the operator's ServiceAccount with eks.amazonaws.com/role-arn)", secret.Namespace, secret.Name, id.roleARN)
	case id.accessKey != "" && id.secretKey != "":
		return id, nil
	}
	return id, fmt.Errorf("Secret %s/%s has neither a credentials INI with role_arn nor aws_access_key_id and aws_secret_access_key", secret.Namespace, secret.Name)
}

// get returns the EFS client for id, building one when id changed.
func (c *clients) get(ctx context.Context, id identity) (Tagger, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.efs != nil && c.id == id {
		return c.efs, nil
	}
	if id.tokenFile != "" {
		if _, err := os.Stat(id.tokenFile); err != nil {
			return nil, fmt.Errorf("web identity token: %w", err)
		}
	}
	load := c.load
	if load == nil {
		load = awsconfig.LoadDefaultConfig
	}
	// LoadDefaultConfig for the HTTP client, retries and AWS_CA_BUNDLE; credentials are set explicitly.
	cfg, err := load(ctx, awsconfig.WithRegion(id.region), awsconfig.WithCredentialsProvider(aws.AnonymousCredentials{}))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if id.roleARN != "" {
		stsClient := sts.NewFromConfig(cfg, func(o *sts.Options) { setEndpoint(&o.BaseEndpoint, id.stsEndpoint) })
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewWebIdentityRoleProvider(stsClient, id.roleARN,
			stscreds.IdentityTokenFile(id.tokenFile), func(o *stscreds.WebIdentityRoleOptions) { o.RoleSessionName = RoleSessionName }))
	} else {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id.accessKey, id.secretKey, ""))
	}
	c.efs = efs.NewFromConfig(cfg, func(o *efs.Options) { setEndpoint(&o.BaseEndpoint, id.efsEndpoint) })
	c.id = id
	return c.efs, nil
}

func setEndpoint(dst **string, url string) {
	if url != "" {
		*dst = aws.String(url)
	}
}
