package metrics

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServeExposesDriverMetrics(t *testing.T) {
	m := New()
	m.ObserveAPICall("efs", "CreateAccessPoint", 20*time.Millisecond, "")
	m.ObserveAPICall("efs", "CreateAccessPoint", time.Second, "AccessPointLimitExceeded")
	m.ObserveThrottle("efs", "DescribeAccessPoints")
	m.ObserveRPC("/csi.v1.Controller/CreateVolume", "OK", time.Millisecond)
	m.ObserveRPC("/csi.v1.Controller/CreateVolume", "ResourceExhausted", time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- m.Serve(t.Context(), l) }()
	resp, err := http.Get("http://" + l.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`aws_efs_csi_api_request_duration_seconds_count{request="CreateAccessPoint",service="efs"} 2`,
		`aws_efs_csi_api_request_errors_total{code="AccessPointLimitExceeded",request="CreateAccessPoint",service="efs"} 1`,
		`aws_efs_csi_api_request_throttles_total{request="DescribeAccessPoints",service="efs"} 1`,
		`aws_efs_csi_rpc_duration_seconds_count{code="OK",method="/csi.v1.Controller/CreateVolume"} 1`,
		`aws_efs_csi_rpc_errors_total{code="ResourceExhausted",method="/csi.v1.Controller/CreateVolume"} 1`,
		`go_goroutines`,
		// pre-registered as upstream does, before any call
		`aws_efs_csi_api_request_duration_seconds_count{request="DescribeMountTargets",service="efs"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics output lacks %s", want)
		}
	}
}
