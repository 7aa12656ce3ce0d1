package fakeaws

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Fault is what the server does to the calls of one operation before handling them.
type Fault struct {
	// Latency is added to every call (the call still counts while it waits; a cancelled request stops waiting).
	Latency time.Duration
	// ThrottleRate is the number of calls per second allowed (a token bucket holding up to one second of calls,
	// at least one); calls beyond it get the service's throttling error. 0 means unlimited.
	ThrottleRate float64
	// ThrottleProbability is the chance, in [0, 1], that a call gets the service's throttling error.
	ThrottleProbability float64
	// ErrorProbability is the chance, in [0, 1], that a call gets a server error with ErrorStatus.
	ErrorProbability float64
	// ErrorStatus is the HTTP status of injected server errors (5xx); default 500.
	ErrorStatus int
}

// faultKind is the outcome of applying a Fault to one call.
type faultKind int

const (
	faultNone faultKind = iota
	faultThrottle
	faultError
)

// faults holds the fault configuration, token buckets and call counters of a Server.
type faults struct {
	fmu     sync.Mutex
	byAPI   map[string]Fault
	buckets map[string]*bucket

	lost map[string]int // api → how many more successful replies to lose

	cmu   sync.Mutex
	calls map[string]int
	keys  map[string][]string // api → distinct access key IDs in first-seen order
}

func newFaults() faults {
	return faults{
		byAPI:   map[string]Fault{},
		buckets: map[string]*bucket{},
		lost:    map[string]int{},
		calls:   map[string]int{},
		keys:    map[string][]string{},
	}
}

// SetFault sets the fault for one operation (e.g. "CreateAccessPoint", "DescribeAvailabilityZones",
// "AssumeRole", "GetMetadata"), or for every operation without its own fault when api is "*". A zero Fault
// clears it.
func (s *Server) SetFault(api string, f Fault) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if f == (Fault{}) {
		delete(s.byAPI, api)
		delete(s.buckets, api)
		return
	}
	s.byAPI[api] = f
	if f.ThrottleRate > 0 {
		s.buckets[api] = newBucket(f.ThrottleRate, time.Now())
	} else {
		delete(s.buckets, api)
	}
}

// LoseReplies makes the next n successful calls of an EFS operation take effect but answer 500 InternalFailure, as
// if the reply had been lost on the way back (the client cannot tell whether the call took effect).
func (s *Server) LoseReplies(api string, n int) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.lost[api] = n
}

// loseReply reports whether this successful reply of api is to be lost, counting it.
func (s *Server) loseReply(api string) bool {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if s.lost[api] <= 0 {
		return false
	}
	s.lost[api]--
	return true
}

// Calls returns the number of calls received for an operation, including faulted and failed ones;
// "*" gives the total over all operations.
func (s *Server) Calls(api string) int {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if api == "*" {
		n := 0
		for _, c := range s.calls {
			n += c
		}
		return n
	}
	return s.calls[api]
}

// CallCounts returns a copy of all per-operation call counters.
func (s *Server) CallCounts() map[string]int {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// ResetCalls sets every call counter to zero and forgets the recorded access keys.
func (s *Server) ResetCalls() {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.calls = map[string]int{}
	s.keys = map[string][]string{}
}

// CallerAccessKeys returns the distinct access key IDs (from the SigV4 Authorization header) that called an
// operation, in the order they were first seen; "*" gives them over all operations, sorted.
func (s *Server) CallerAccessKeys(api string) []string {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if api != "*" {
		return append([]string(nil), s.keys[api]...)
	}
	seen := map[string]bool{}
	var out []string
	for _, ks := range s.keys {
		for _, k := range ks {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// count records one call of api and the access key that signed it.
func (s *Server) count(api string, r *http.Request) {
	key := accessKeyID(r)
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.calls[api]++
	if key == "" {
		return
	}
	for _, k := range s.keys[api] {
		if k == key {
			return
		}
	}
	s.keys[api] = append(s.keys[api], key)
}

// applyFault waits the configured latency and decides whether the call is throttled or fails. It returns
// faultNone when the request was cancelled while waiting (the caller is gone; nothing useful can be written).
func (s *Server) applyFault(api string, r *http.Request) (faultKind, int) {
	s.fmu.Lock()
	f, ok := s.byAPI[api]
	key := api
	if !ok {
		f, ok = s.byAPI["*"]
		key = "*"
	}
	if !ok {
		s.fmu.Unlock()
		return faultNone, 0
	}
	throttled := false
	if b := s.buckets[key]; b != nil {
		throttled = !b.take(time.Now())
	}
	s.fmu.Unlock()

	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return faultNone, 0
		}
	}
	if throttled || (f.ThrottleProbability > 0 && s.randFloat() < f.ThrottleProbability) {
		return faultThrottle, 0
	}
	if f.ErrorProbability > 0 && s.randFloat() < f.ErrorProbability {
		status := f.ErrorStatus
		if status < 500 || status > 599 {
			status = http.StatusInternalServerError
		}
		return faultError, status
	}
	return faultNone, 0
}

// bucket is a token bucket refilled at rate tokens per second, holding at most max(1, rate) tokens.
type bucket struct {
	rate, tokens, capacity float64
	last                   time.Time
}

func newBucket(rate float64, now time.Time) *bucket {
	c := rate
	if c < 1 {
		c = 1
	}
	return &bucket{rate: rate, tokens: c, capacity: c, last: now}
}

// take removes one token if there is one.
func (b *bucket) take(now time.Time) bool {
	b.tokens += now.Sub(b.last).Seconds() * b.rate
	if b.tokens > b.capacity {
		b.tokens = b.capacity
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// accessKeyID returns the access key ID of a SigV4-signed request (Authorization header or presigned query),
// or "" when the request is unsigned. The signature itself is not verified.
func accessKeyID(r *http.Request) string {
	cred := ""
	if auth := r.Header.Get("Authorization"); auth != "" {
		_, rest, ok := strings.Cut(auth, "Credential=")
		if !ok {
			return ""
		}
		cred, _, _ = strings.Cut(rest, ",")
	} else {
		cred = r.URL.Query().Get("X-Amz-Credential")
	}
	key, _, _ := strings.Cut(strings.TrimSpace(cred), "/")
	return key
}
