// Command netcheck is the local cluster's network probe, run as a pod on the pod network by the harness's tests:
//
//	netcheck serve PORT   answer every HTTP request with "netcheck <pod name>" (the host name) until SIGTERM
//	netcheck get URL      GET URL and print the body; retry for a minute, then fail
//	netcheck whoami       authenticate to the API server as the pod does (client-go's in-cluster configuration:
//	                      the kubernetes Service, the service account token and CA) and print the user name
//	                      the API server saw (a SelfSubjectReview); retry for a minute, then fail
//
// It is a static Go binary, the only file of its image.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "netcheck: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 2 && args[0] == "serve" {
		return serve(args[1])
	}
	if len(args) == 2 && args[0] == "get" {
		return retry(func(ctx context.Context) error { return get(ctx, args[1]) })
	}
	if len(args) == 1 && args[0] == "whoami" {
		return retry(whoami)
	}
	return fmt.Errorf("usage: netcheck serve PORT | get URL | whoami (got %q)", args)
}

func serve(port string) error {
	host, _ := os.Hostname()
	srv := &http.Server{Addr: ":" + port, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "netcheck %s\n", host) })}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		_ = srv.Close()
	}()
	fmt.Printf("netcheck: serving on :%s\n", port)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// retry runs f until it succeeds or a minute passed: a pod may start before its Service's rules are in place.
func retry(f func(context.Context) error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := f(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		fmt.Fprintf(os.Stderr, "netcheck: %v; retrying\n", err)
		time.Sleep(time.Second)
	}
}

func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	fmt.Print(string(body))
	return nil
}

func whoami(ctx context.Context) error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("SelfSubjectReview through %s: %w", cfg.Host, err)
	}
	fmt.Printf("netcheck: %s is %s\n", cfg.Host, r.Status.UserInfo.Username)
	return nil
}
