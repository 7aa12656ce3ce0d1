package driver

import "sync"

// startup is the controller's start-up state as requests see it: whether the AWS clients are installed, the
// failure of the last attempt to make them, and a channel closed at every change, so that waiting requests wake up.
type startup struct {
	mu      sync.Mutex
	done    bool
	err     error
	changed chan struct{}
}

func newStartup() startup { return startup{changed: make(chan struct{})} }

// set records the outcome of an attempt and wakes every waiter.
func (s *startup) set(err error, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err, s.done = err, s.done || done
	close(s.changed)
	s.changed = make(chan struct{})
}

// wait returns a channel closed at the next change, or the failure of the last attempt.
func (s *startup) wait() (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done && s.err != nil {
		return nil, s.err
	}
	return s.changed, nil
}

// failure is the failure of the last attempt, nil once the clients are installed.
func (s *startup) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	return s.err
}
