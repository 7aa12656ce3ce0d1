// Command livenessprobe is a STAND-IN for kubernetes-csi's livenessprobe, which the Go module proxy does not
// serve: it answers GET /healthz by calling the CSI driver's Probe on --csi-address (within --probe-timeout),
// 200 when the driver is ready and 500 with the reason otherwise. It listens on --http-endpoint, or on
// 0.0.0.0:--health-port when that is empty, as the real one. Flags it does not use (-v) are accepted.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	address := fs.String("csi-address", "/run/csi/socket", "path of the CSI driver's socket")
	endpoint := fs.String("http-endpoint", "", "address to serve /healthz on; overrides --health-port")
	port := fs.Int("health-port", 9808, "port to serve /healthz on, on every address")
	timeout := fs.Duration("probe-timeout", time.Second, "time allowed for the driver's Probe")
	fs.String("v", "", "log level (accepted, ignored)")
	_ = fs.Parse(os.Args[1:])
	addr := *endpoint
	if addr == "" {
		addr = "0.0.0.0:" + strconv.Itoa(*port)
	}
	conn, err := grpc.NewClient("unix://"+*address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatalf("livenessprobe (stand-in): %v", err)
	}
	log.Printf("livenessprobe (stand-in): serving /healthz on %s for %s", addr, *address)
	srv := &http.Server{Addr: addr, Handler: handler(csi.NewIdentityClient(conn), *timeout), ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// handler serves /healthz from the driver's Probe.
func handler(id csi.IdentityClient, timeout time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		resp, err := id.Probe(ctx, &csi.ProbeRequest{})
		if err != nil {
			http.Error(w, "probe failed: "+err.Error(), http.StatusInternalServerError)
			return
		}
		// An unset ready field means ready (CSI spec).
		if resp.GetReady() != nil && !resp.GetReady().GetValue() {
			http.Error(w, "driver responded but is not ready", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}
