package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// TestRequestsDuringStartUpWaitForInitialisation (issue 26 item 10): Probe answers ready as soon as the socket
// serves, so csi-provisioner sends CreateVolume while the AWS clients are still being made. Those requests wait for
// them, each within its own deadline, and succeed; upstream v3.4.1 builds its clients before it serves at all
// (kubernetes-sigs/aws-efs-csi-driver@3fcc6bdd7533a4cfd15643b31593f7ff154584c9 pkg/driver/driver.go NewDriver), so
// none of its requests fail for this.
func TestRequestsDuringStartUpWaitForInitialisation(t *testing.T) {
	e := newEnv(t, envOpts{notReady: true})
	const n = 32
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second) // csi-provisioner's default --timeout
			defer cancel()
			_, errs[i] = e.client.CreateVolume(ctx, createReq(fmt.Sprintf("pvc-start-%d", i), e.params(), nil))
		}()
	}
	time.Sleep(150 * time.Millisecond) // the requests are in, waiting
	e.ctrl.SetClouds(newProvider(t, e.aws, e.metrics))
	wg.Wait()
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			t.Errorf("CreateVolume %d during start-up: %v", i, err)
		}
	}
	if got := len(e.aws.AccessPoints(e.fsID)); got != n || failed != 0 {
		t.Fatalf("%d access points, %d failures; want %d, 0", got, failed, n)
	}
}

// TestStartUpFailureIsNamedAndDeadlineKept: a failed attempt to initialise is an error naming what failed, for the
// requests waiting and those that arrive while it stands (Unavailable: the controller retries, so will the
// provisioner); a request whose deadline passes while initialisation is still running says so. Once an attempt
// succeeds, requests are served.
func TestStartUpFailureIsNamedAndDeadlineKept(t *testing.T) {
	e := newEnv(t, envOpts{notReady: true})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := e.client.CreateVolume(ctx, createReq("pvc-deadline", e.params(), nil))
	wantCode(t, err, codes.DeadlineExceeded)

	waiting := make(chan error, 1)
	go func() {
		_, err := e.client.CreateVolume(t.Context(), createReq("pvc-waiting", e.params(), nil))
		waiting <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cause := errors.New("read instance metadata: dial tcp 169.254.169.254:80: connect: no route to host")
	e.ctrl.SetInitError(cause)
	select {
	case err := <-waiting:
		wantCode(t, err, codes.Unavailable, "initialising AWS access failed", "169.254.169.254")
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting request was not told of the failed initialisation")
	}
	_, err = e.create(t, "pvc-after-failure", e.params())
	wantCode(t, err, codes.Unavailable, "initialising AWS access failed", "no route to host")
	if err := e.ctrl.Ready(t.Context()); err == nil || !errors.Is(err, cause) {
		t.Errorf("health check = %v, want the cause %v", err, cause)
	}
	e.ctrl.SetClouds(newProvider(t, e.aws, e.metrics))
	if _, err := e.create(t, "pvc-after-init", e.params()); err != nil {
		t.Fatalf("CreateVolume after a successful attempt: %v", err)
	}
}
