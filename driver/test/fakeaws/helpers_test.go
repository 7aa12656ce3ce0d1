package fakeaws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

const testAccessKey = "AKIAFAKEAWSTEST00001"

// startServer starts a fake on loopback and stops it when the test ends.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// sdkConfig is an aws.Config that sends every service to the fake, signed with static credentials; attempts
// bounds the SDK's retries (1 = no retry).
func sdkConfig(s *Server, key string, attempts int) aws.Config {
	return aws.Config{
		Region:           s.Options().Region,
		Credentials:      credentials.NewStaticCredentialsProvider(key, "secret-"+key, ""),
		BaseEndpoint:     aws.String(s.URL()),
		RetryMaxAttempts: attempts,
	}
}

func efsClient(s *Server, attempts int) *efs.Client {
	return efs.NewFromConfig(sdkConfig(s, testAccessKey, attempts))
}

func ec2Client(s *Server) *ec2.Client {
	return ec2.NewFromConfig(sdkConfig(s, testAccessKey, 1))
}

func stsClient(s *Server, key string) *sts.Client {
	return sts.NewFromConfig(sdkConfig(s, key, 1))
}
