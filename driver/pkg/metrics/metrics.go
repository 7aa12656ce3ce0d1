package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// Metrics is the driver's metric set on its own registry.
type Metrics struct {
	registry     *prometheus.Registry
	apiDuration  *prometheus.HistogramVec
	apiErrors    *prometheus.CounterVec
	apiThrottles *prometheus.CounterVec
	rpcDuration  *prometheus.HistogramVec
	rpcErrors    *prometheus.CounterVec
	dependencies *prometheus.GaugeVec
}

// New creates the metrics and registers them, with the Go and process collectors, on a new registry.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		// Upstream's names, labels, help and buckets (pkg/metrics): one observation per attempt.
		apiDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "aws_efs_csi_api_request_duration_seconds", Help: "AWS SDK API request duration by request type in seconds",
		}, []string{"service", "request"}),
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aws_efs_csi_api_request_errors_total", Help: "Total number of AWS SDK API errors by error code and request type",
		}, []string{"service", "request", "code"}),
		apiThrottles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aws_efs_csi_api_request_throttles_total", Help: "Total number of throttled AWS SDK API requests per request type",
		}, []string{"service", "request"}),
		rpcDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "aws_efs_csi_rpc_duration_seconds", Help: "CSI RPC latency by method and gRPC code.",
			Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "code"}),
		rpcErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aws_efs_csi_rpc_errors_total", Help: "CSI RPCs that returned an error, by method and gRPC code.",
		}, []string{"method", "code"}),
	}
	m.dependencies = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "aws_efs_csi_dependency_healthy",
		Help: "1 when a dependency of the driver (aws_credentials, efs_utils_watchdog, node_identity, aws_clients) passed its last check, 0 when not. Liveness never reflects these: see docs/driver/health.md.",
	}, []string{"dependency"})
	m.registry.MustRegister(m.apiDuration, m.apiErrors, m.apiThrottles, m.rpcDuration, m.rpcErrors, m.dependencies,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Upstream pre-registers the EFS operations, so their series exist before the first call.
	for _, op := range []string{"CreateAccessPoint", "DeleteAccessPoint", "DescribeAccessPoints", "DescribeFileSystems", "DescribeMountTargets"} {
		m.apiDuration.WithLabelValues("efs", op)
	}
	return m
}

// Registry returns the registry (for tests and extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// ObserveAPICall records one AWS API attempt; code is "" on success or throttling.
func (m *Metrics) ObserveAPICall(service, operation string, d time.Duration, code string) {
	m.apiDuration.WithLabelValues(service, operation).Observe(d.Seconds())
	if code != "" {
		m.apiErrors.WithLabelValues(service, operation, code).Inc()
	}
}

// ObserveThrottle records one throttled AWS API attempt (counted here, not as an error, as upstream does).
func (m *Metrics) ObserveThrottle(service, operation string) {
	m.apiThrottles.WithLabelValues(service, operation).Inc()
}

// ObserveRPC records one CSI RPC; code is the gRPC code name ("OK" on success).
func (m *Metrics) ObserveRPC(method, code string, d time.Duration) {
	m.rpcDuration.WithLabelValues(method, code).Observe(d.Seconds())
	if code != "OK" {
		m.rpcErrors.WithLabelValues(method, code).Inc()
	}
}

// SetDependencyHealthy records the latest check of a dependency (package health).
func (m *Metrics) SetDependencyHealthy(dependency string, healthy bool) {
	v := 0.0
	if healthy {
		v = 1
	}
	m.dependencies.WithLabelValues(dependency).Set(v)
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Serve serves /metrics on addr until ctx ends. It returns once listening fails or the server has shut down.
func (m *Metrics) Serve(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	klog.V(2).InfoS("Serving metrics", "address", l.Addr().String())
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve metrics on %s: %w", l.Addr(), err)
	}
	return nil
}
