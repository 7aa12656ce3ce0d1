package toolcache

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{name: "override", env: map[string]string{DirEnv: "/cache/tools", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, want: "/cache/tools"},
		{name: "relative override", env: map[string]string{DirEnv: "tools"}, wantErr: DirEnv + ` "tools": want an absolute directory`},
		{name: "XDG", env: map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, want: "/x/aws-efs-csi/tools"},
		{name: "HOME", env: map[string]string{"HOME": "/h"}, want: "/h/.cache/aws-efs-csi/tools"},
		{name: "nothing", env: map[string]string{}, wantErr: "cannot choose a tool cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Dir(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Dir = %q, %v; want error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Dir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A second caller waits (and says who waits) until the first releases; a cancelled wait returns the context's
// error and leaves the lock to its holder.
func TestLockWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".entry.lock")
	unlock, err := Lock(t.Context(), path, "first", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	impatient := make(signalWriter, 1)
	cancelled := make(chan error, 1)
	go func() {
		_, err := Lock(ctx, path, "impatient", impatient)
		cancelled <- err
	}()
	<-impatient // it found the lock taken and waits
	cancel()
	if err := <-cancelled; err != context.Canceled {
		t.Fatalf("cancelled Lock = %v, want %v", err, context.Canceled)
	}

	var log bytes.Buffer
	waiting := make(signalWriter, 1)
	got := make(chan error, 1)
	go func() {
		u, err := Lock(t.Context(), path, "second", io.MultiWriter(&log, waiting))
		if err == nil {
			u()
		}
		got <- err
	}()
	<-waiting // the second caller found the lock taken and is blocked on it
	select {
	case err := <-got:
		t.Fatalf("second Lock returned %v while the first was held", err)
	case <-time.After(100 * time.Millisecond): // bounded: an unblocked flock returns in microseconds
	}
	if want := "second: waiting for another build holding " + path; !strings.Contains(log.String(), want) {
		t.Errorf("log = %q, want it to contain %q", log.String(), want)
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("second Lock after release: %v", err)
	}
}

// signalWriter signals once per write.
type signalWriter chan struct{}

func (w signalWriter) Write(p []byte) (int, error) {
	select {
	case w <- struct{}{}:
	default:
	}
	return len(p), nil
}
