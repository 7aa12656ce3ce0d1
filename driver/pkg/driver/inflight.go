package driver

import (
	"fmt"
	"sync"
)

// inFlight rejects a second concurrent operation on the same key (volume name or ID); the caller retries.
type inFlight struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func newInFlight() *inFlight { return &inFlight{keys: map[string]struct{}{}} }

// acquire marks key busy and returns the function that frees it, or ErrInFlight.
func (f *inFlight) acquire(key string) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.keys[key]; busy {
		return nil, fmt.Errorf("%w: %s", ErrInFlight, key)
	}
	f.keys[key] = struct{}{}
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.keys, key)
	}, nil
}
