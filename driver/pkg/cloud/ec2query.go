package cloud

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The driver makes one EC2 call, DescribeAvailabilityZones. aws-sdk-go-v2's EC2 client carries every EC2
// operation (the largest package of the driver binary and its slowest compile), so this file speaks the EC2 query
// protocol for that one call instead: the same SigV4 signing, endpoint, retryer, error types and metrics as the
// SDK client, so callers and metrics cannot tell the difference.

const (
	ec2ServiceID  = "EC2" // the SDK's service ID; lower-cased, the metrics' service label
	ec2SigningID  = "ec2"
	ec2APIVersion = "2016-11-15"
	opDescribeAZs = "DescribeAvailabilityZones"
)

// ec2Query is a client of EC2's query protocol for DescribeAvailabilityZones.
type ec2Query struct {
	cfg      aws.Config
	endpoint string
	retryer  func(op string) aws.Retryer
	observer Observer
	now      func() time.Time
}

func newEC2Query(cfg aws.Config, endpoint string, retryer func(string) aws.Retryer, obs Observer) *ec2Query {
	return &ec2Query{cfg: cfg, endpoint: endpoint, retryer: retryer, observer: obs, now: time.Now}
}

// serviceEndpointSource and fipsSource are what config.EnvConfig and config.SharedConfig say about endpoints.
type serviceEndpointSource interface {
	GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
}

type fipsSource interface {
	GetUseFIPSEndpoint(ctx context.Context) (aws.FIPSEndpointState, bool, error)
}

// ec2Endpoint resolves the endpoint the SDK's EC2 client would use: AWS_ENDPOINT_URL_EC2 or the services section
// of the shared config, else the configured base endpoint, else the regional (or, with AWS_USE_FIPS_ENDPOINT, the
// FIPS) endpoint of the region's partition.
func ec2Endpoint(ctx context.Context, cfg aws.Config) (string, error) {
	fips := false
	for _, src := range cfg.ConfigSources {
		if s, ok := src.(serviceEndpointSource); ok {
			if v, found, err := s.GetServiceBaseEndpoint(ctx, ec2ServiceID); err != nil {
				return "", err
			} else if found && v != "" {
				return v, nil
			}
		}
	}
	if cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != "" {
		return *cfg.BaseEndpoint, nil
	}
	for _, src := range cfg.ConfigSources {
		if s, ok := src.(fipsSource); ok {
			if v, found, err := s.GetUseFIPSEndpoint(ctx); err != nil {
				return "", err
			} else if found {
				fips = v == aws.FIPSEndpointStateEnabled
				break
			}
		}
	}
	if cfg.Region == "" {
		return "", errors.New("EC2 endpoint: the AWS region is empty")
	}
	host := "ec2"
	if fips {
		host = "ec2-fips"
	}
	return "https://" + host + "." + cfg.Region + "." + dnsSuffix(cfg.Region), nil
}

// dnsSuffix is the DNS suffix of the AWS partition of region (the SDK's partition table, by region prefix).
func dnsSuffix(region string) string {
	for _, p := range []struct{ prefix, suffix string }{
		{"cn-", "amazonaws.com.cn"},
		{"us-isob-", "sc2s.sgov.gov"},
		{"us-isof-", "csp.hci.ic.gov"},
		{"us-iso-", "c2s.ic.gov"},
		{"eu-isoe-", "cloud.adc-e.uk"},
	} {
		if strings.HasPrefix(region, p.prefix) {
			return p.suffix
		}
	}
	return "amazonaws.com"
}

// describeAZsResponse is the part of EC2's DescribeAvailabilityZones response the driver reads.
type describeAZsResponse struct {
	Zones []struct {
		ZoneName string `xml:"zoneName"`
		ZoneID   string `xml:"zoneId"`
	} `xml:"availabilityZoneInfo>item"`
}

// ec2ErrorResponse is EC2's error document.
type ec2ErrorResponse struct {
	Errors []struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Errors>Error"`
	RequestID string `xml:"RequestID"`
}

// DescribeAvailabilityZones lists the account's zones in the region, retrying as the SDK does, and reports the
// attempts to the observer as the SDK client's metrics middleware does (service "ec2", one report per attempt,
// throttled attempts also as throttles).
func (c *ec2Query) DescribeAvailabilityZones(ctx context.Context) ([]Zone, error) {
	zones, err := c.withRetries(ctx, opDescribeAZs, func(ctx context.Context) ([]Zone, error) {
		var out describeAZsResponse
		if err := c.call(ctx, opDescribeAZs, &out); err != nil {
			return nil, err
		}
		zones := make([]Zone, 0, len(out.Zones))
		for _, z := range out.Zones {
			zones = append(zones, Zone{Name: z.ZoneName, ID: z.ZoneID})
		}
		return zones, nil
	})
	if err != nil {
		err = &smithy.OperationError{ServiceID: ec2ServiceID, OperationName: opDescribeAZs, Err: err}
	}
	return zones, err
}

// withRetries runs attempt under the operation's retryer the way the SDK's retry middleware does: an attempt
// token before each attempt (client-side rate limiting in adaptive mode), a retry token from the retry quota
// before each retry, and the retryer's backoff between attempts.
func (c *ec2Query) withRetries(ctx context.Context, op string, attempt func(context.Context) ([]Zone, error)) ([]Zone, error) {
	r := c.retryer(op)
	releaseRetry := func(error) error { return nil }
	for n := 1; ; n++ {
		releaseAttempt, err := attemptToken(ctx, r)
		if err != nil {
			return nil, err
		}
		start := c.now()
		zones, err := attempt(ctx)
		_ = releaseAttempt(err)
		c.observeAttempt(op, c.now().Sub(start), err)
		if err == nil {
			_ = releaseRetry(nil)
			return zones, nil
		}
		if !r.IsErrorRetryable(err) || (r.MaxAttempts() > 0 && n >= r.MaxAttempts()) {
			return nil, err
		}
		if releaseRetry, err = r.GetRetryToken(ctx, err); err != nil {
			return nil, fmt.Errorf("failed to get rate limit token, retry quota exceeded: %w", err)
		}
		delay, derr := r.RetryDelay(n, err)
		if derr != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// observeAttempt reports one attempt exactly as addMetricsMiddleware does for the SDK's clients.
func (c *ec2Query) observeAttempt(op string, d time.Duration, err error) {
	if c.observer == nil {
		return
	}
	service, code := strings.ToLower(ec2ServiceID), ""
	switch {
	case err != nil && isThrottle(err):
		c.observer.ObserveThrottle(service, op)
	case err != nil:
		code = errorCode(err)
	}
	c.observer.ObserveAPICall(service, op, d, code)
}

func attemptToken(ctx context.Context, r aws.Retryer) (func(error) error, error) {
	if v2, ok := r.(aws.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return r.GetInitialToken(), nil
}

// call sends one signed query-protocol request and decodes the response into out. Errors are those of the SDK:
// an *awshttp.ResponseError wrapping a smithy.APIError for an EC2 error response, the transport's error
// otherwise.
func (c *ec2Query) call(ctx context.Context, action string, out any) error {
	body := url.Values{"Action": {action}, "Version": {ec2APIVersion}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("EC2 endpoint %q: %w", c.endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if c.cfg.Credentials == nil {
		return errors.New("no AWS credentials provider")
	}
	creds, err := c.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("retrieve AWS credentials: %w", err)
	}
	sum := sha256.Sum256([]byte(body))
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), ec2SigningID, c.cfg.Region, c.now().UTC()); err != nil {
		return fmt.Errorf("sign the EC2 request: %w", err)
	}
	client := c.cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return &smithy.CanceledError{Err: err}
		}
		return &smithyhttp.RequestSendError{Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if err := xml.Unmarshal(data, out); err != nil {
			return &smithy.DeserializationError{Err: fmt.Errorf("EC2 %s response: %w", action, err)}
		}
		return nil
	}
	apiErr := &smithy.GenericAPIError{Code: http.StatusText(resp.StatusCode), Message: strings.TrimSpace(string(data))}
	var doc ec2ErrorResponse
	if xml.Unmarshal(data, &doc) == nil && len(doc.Errors) > 0 {
		apiErr.Code, apiErr.Message = doc.Errors[0].Code, doc.Errors[0].Message
	}
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: apiErr},
		RequestID:     doc.RequestID,
	}
}
