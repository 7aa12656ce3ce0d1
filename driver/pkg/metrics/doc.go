// Package metrics owns the driver's Prometheus registry and metrics: AWS API latency, errors and throttles per
// operation, and CSI RPC latency and errors per method and code, served over HTTP on --http-endpoint.
package metrics
