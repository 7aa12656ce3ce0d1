package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// identity answers Probe with the configured result.
type identity struct {
	csi.UnimplementedIdentityServer
	ready *wrapperspb.BoolValue
	err   error
	delay time.Duration
}

func (i identity) Probe(ctx context.Context, _ *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	select {
	case <-time.After(i.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &csi.ProbeResponse{Ready: i.ready}, i.err
}

func TestHealthzCallsProbe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		id       identity
		wantCode int
		wantBody string
	}{
		{name: "ready", id: identity{ready: wrapperspb.Bool(true)}, wantCode: 200, wantBody: "ok"},
		{name: "ready unset means ready", id: identity{}, wantCode: 200, wantBody: "ok"},
		{name: "not ready", id: identity{ready: wrapperspb.Bool(false)}, wantCode: 500, wantBody: "not ready"},
		{name: "probe error", id: identity{err: errors.New("watchdog gone")}, wantCode: 500, wantBody: "watchdog gone"},
		{name: "probe too slow", id: identity{delay: time.Second}, wantCode: 500, wantBody: "DeadlineExceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			socket := filepath.Join(t.TempDir(), "csi.sock")
			l, err := net.Listen("unix", socket)
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			csi.RegisterIdentityServer(srv, tc.id)
			go func() { _ = srv.Serve(l) }()
			defer srv.Stop()
			conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			hs := httptest.NewServer(handler(csi.NewIdentityClient(conn), 200*time.Millisecond))
			defer hs.Close()
			resp, err := http.Get(hs.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantCode || !strings.Contains(string(body), tc.wantBody) {
				t.Fatalf("/healthz = %d %q; want %d containing %q", resp.StatusCode, body, tc.wantCode, tc.wantBody)
			}
		})
	}
}
