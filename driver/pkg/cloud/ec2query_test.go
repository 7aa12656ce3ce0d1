package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// recorder is an Observer that keeps every report, without durations.
type recorder struct {
	mu      sync.Mutex
	reports []string
}

func (r *recorder) ObserveAPICall(service, operation string, _ time.Duration, code string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, fmt.Sprintf("call %s %s code=%q", service, operation, code))
}

func (r *recorder) ObserveThrottle(service, operation string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, fmt.Sprintf("throttle %s %s", service, operation))
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.reports, "; ")
}

// sdkZones calls DescribeAvailabilityZones with aws-sdk-go-v2's EC2 client, configured as the driver configured
// it before ec2query.go: the metrics middleware and the operation's retryer.
func sdkZones(ctx context.Context, cfg aws.Config, obs Observer, r aws.Retryer) ([]Zone, error) {
	cfg = cfg.Copy()
	cfg.APIOptions = append(cfg.APIOptions, addMetricsMiddleware(obs, time.Now))
	out, err := ec2.NewFromConfig(cfg).DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}, func(o *ec2.Options) {
		o.Retryer = r
	})
	if err != nil {
		return nil, err
	}
	var zones []Zone
	for _, z := range out.AvailabilityZones {
		zones = append(zones, Zone{Name: aws.ToString(z.ZoneName), ID: aws.ToString(z.ZoneId)})
	}
	return zones, nil
}

func fakeConfig(t *testing.T, s *fakeaws.Server) aws.Config {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(t.Context(), config.WithRegion("eu-west-3"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.BaseEndpoint = aws.String(s.URL())
	return cfg
}

// TestEC2QueryBehavesAsTheSDKClient runs the same calls through the SDK's EC2 client and through ec2Query against
// fakeaws (the real EC2 query protocol over HTTP) and compares the zones, the requests the server saw, the
// metrics reports and the classified errors.
func TestEC2QueryBehavesAsTheSDKClient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     fakeaws.Fault
		wantCalls int
		wantErr   error
	}{
		{"success", fakeaws.Fault{}, 1, nil},
		{"throttled on every attempt", fakeaws.Fault{ThrottleProbability: 1}, 3, ErrThrottled},
		{"server errors on every attempt", fakeaws.Fault{ErrorProbability: 1, ErrorStatus: 503}, 3, ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startFake(t, fakeaws.Options{Region: "eu-west-3"})
			cfg := fakeConfig(t, s)
			s.SetFault("DescribeAvailabilityZones", tc.fault)
			opts := RetryOptions{MaxAttempts: 3, MaxBackoff: time.Millisecond}

			var sdkObs, ourObs recorder
			sdkZ, sdkErr := sdkZones(t.Context(), cfg, &sdkObs, newRetryers(opts).get(opDescribeAZs))
			sdkCalls := s.Calls("DescribeAvailabilityZones")
			s.ResetCalls()
			c := &Cloud{ec2: newEC2Query(cfg, s.URL(), newRetryers(opts).get, &ourObs)}
			ourZ, ourErr := c.AvailabilityZones(t.Context())
			ourCalls := s.Calls("DescribeAvailabilityZones")

			if fmt.Sprint(ourZ) != fmt.Sprint(sdkZ) {
				t.Errorf("zones %v, the SDK client's %v", ourZ, sdkZ)
			}
			if tc.wantErr == nil && len(ourZ) != 3 {
				t.Errorf("zones %v, want fakeaws' three", ourZ)
			}
			if ourCalls != tc.wantCalls || sdkCalls != tc.wantCalls {
				t.Errorf("the server saw %d requests from ec2Query, %d from the SDK client; want %d each", ourCalls, sdkCalls, tc.wantCalls)
			}
			if got, want := ourObs.String(), sdkObs.String(); got != want {
				t.Errorf("metrics reports\n got %s\nwant %s (the SDK client's)", got, want)
			}
			if tc.wantErr != nil {
				if !errors.Is(ourErr, tc.wantErr) {
					t.Errorf("error %v, want %v", ourErr, tc.wantErr)
				}
				if got, want := errorCode(ourErr), errorCode(sdkErr); got != want {
					t.Errorf("error code %q, the SDK client's %q (%v)", got, want, sdkErr)
				}
			} else if ourErr != nil || sdkErr != nil {
				t.Fatalf("errors %v (ours), %v (SDK)", ourErr, sdkErr)
			}
			if keys := s.CallerAccessKeys("DescribeAvailabilityZones"); len(keys) != 1 || keys[0] != "AKIAFAKEAWSCLOUD0001" {
				t.Errorf("signed with access keys %v, want the configured one", keys)
			}
		})
	}
}

func TestEC2QueryCanceled(t *testing.T) {
	s := startFake(t, fakeaws.Options{})
	s.SetFault("DescribeAvailabilityZones", fakeaws.Fault{Latency: time.Minute})
	var obs recorder
	c := &Cloud{ec2: newEC2Query(fakeConfig(t, s), s.URL(), newRetryers(RetryOptions{}).get, &obs)}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.AvailabilityZones(ctx)
	if !errors.Is(err, ErrUnavailable) || errorCode(err) != "Canceled" {
		t.Fatalf("error %v (code %q), want Unavailable with code Canceled", err, errorCode(err))
	}
	if got := obs.String(); got != `call ec2 DescribeAvailabilityZones code="Canceled"` {
		t.Errorf("reports %s", got)
	}
}

func TestEC2Endpoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		region string
		env    map[string]string
		base   string
		want   string
	}{
		{"regional", "eu-west-3", nil, "", "https://ec2.eu-west-3.amazonaws.com"},
		{"China", "cn-north-1", nil, "", "https://ec2.cn-north-1.amazonaws.com.cn"},
		{"GovCloud", "us-gov-west-1", nil, "", "https://ec2.us-gov-west-1.amazonaws.com"},
		{"ISO", "us-iso-east-1", nil, "", "https://ec2.us-iso-east-1.c2s.ic.gov"},
		{"FIPS", "us-east-1", map[string]string{"AWS_USE_FIPS_ENDPOINT": "true"}, "", "https://ec2-fips.us-east-1.amazonaws.com"},
		{"base endpoint", "us-east-1", nil, "http://127.0.0.1:1", "http://127.0.0.1:1"},
		{"AWS_ENDPOINT_URL", "us-east-1", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:2"}, "", "http://127.0.0.1:2"},
		{"AWS_ENDPOINT_URL_EC2 wins", "us-east-1", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:2", "AWS_ENDPOINT_URL_EC2": "http://127.0.0.1:3"}, "http://127.0.0.1:1", "http://127.0.0.1:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"AWS_USE_FIPS_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2"} {
				t.Setenv(k, tc.env[k])
			}
			t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
			cfg, err := config.LoadDefaultConfig(t.Context(), config.WithRegion(tc.region))
			if err != nil {
				t.Fatal(err)
			}
			if tc.base != "" {
				cfg.BaseEndpoint = aws.String(tc.base)
			}
			got, err := ec2Endpoint(t.Context(), cfg)
			if err != nil || got != tc.want {
				t.Fatalf("endpoint %q, %v; want %q", got, err, tc.want)
			}
			// The SDK's own EC2 client resolves the same endpoint.
			if sdk := sdkEndpoint(t, cfg); sdk != tc.want {
				t.Errorf("the SDK's EC2 client resolves %q", sdk)
			}
		})
	}
}

// sdkEndpoint is the URL the SDK's EC2 client sends DescribeAvailabilityZones to (captured by an HTTP client that
// fails every request).
func sdkEndpoint(t *testing.T, cfg aws.Config) string {
	t.Helper()
	var got []string
	cfg = cfg.Copy()
	cfg.Credentials = aws.AnonymousCredentials{}
	cfg.HTTPClient = capture(func(u string) { got = append(got, u) })
	_, _ = ec2.NewFromConfig(cfg).DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}, func(o *ec2.Options) {
		o.Retryer = aws.NopRetryer{}
	})
	sort.Strings(got)
	if len(got) == 0 {
		t.Fatal("the SDK client sent no request")
	}
	return strings.TrimSuffix(got[0], "/")
}

// capture is an aws.HTTPClient that reports each request's URL and fails it.
type capture func(url string)

func (c capture) Do(r *http.Request) (*http.Response, error) {
	c(r.URL.Scheme + "://" + r.URL.Host + r.URL.Path)
	return nil, errors.New("not sent")
}
