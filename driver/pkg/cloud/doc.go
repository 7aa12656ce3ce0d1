// Package cloud talks to AWS for the driver: the EFS, EC2 and STS calls it makes (aws-sdk-go-v2 behind narrow
// interfaces), retries and throttling, sentinel errors, per-role client caching, instance metadata and the metrics
// middleware. It never imports gRPC: callers map its sentinel errors to codes.
package cloud
