package fakeaws

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configures a Server. The zero value gives a usable server in us-east-1.
type Options struct {
	// Region is the region the fake serves and reports; default "us-east-1".
	Region string
	// AccountID owns every resource and is reported by STS and IMDS; default "123456789012".
	AccountID string
	// AccessPointQuota is the number of access points allowed per file system; default 10000 (AWS's current
	// per-file-system limit). CreateAccessPoint beyond it fails with AccessPointLimitExceeded.
	AccessPointQuota int
	// Zones are the availability zones of the region, in order; default <region>a, <region>b, <region>c with IDs
	// <prefix>-az1, -az2, -az3 (see ZoneIDPrefix). Each zone gets one subnet for mount targets.
	Zones []Zone
	// InstanceZone is the zone name IMDS reports for the fake instance; default the first zone.
	InstanceZone string
	// InstanceID is the instance ID IMDS reports; default "i-0123456789abcdef0".
	InstanceID string
	// CredentialDuration, when set, overrides the lifetime of the temporary credentials that STS hands out
	// (normally the request's DurationSeconds, default 1h), so that tests can make clients refresh quickly.
	CredentialDuration time.Duration
	// FileSystemCreateDelay is how long a file system made by CreateFileSystem stays "creating" before it becomes
	// "available"; default 0 (available on the next call). Mount targets and access points use
	// MountTargetCreateDelay and AccessPointCreateDelay the same way.
	FileSystemCreateDelay time.Duration
	// MountTargetCreateDelay: see FileSystemCreateDelay.
	MountTargetCreateDelay time.Duration
	// AccessPointCreateDelay: see FileSystemCreateDelay.
	AccessPointCreateDelay time.Duration
	// Seed seeds the random numbers used for IDs and fault probabilities; 0 picks a random seed.
	Seed uint64
}

// Zone is one availability zone: its name (us-east-1a) and its account-independent ID (use1-az1).
type Zone struct{ Name, ID string }

// Server is the fake. It is an http.Handler; Start also listens on loopback.
type Server struct {
	opts  Options
	mux   *http.ServeMux
	state *state
	faults
	sts  *stsState
	imds *imdsState

	rndMu sync.Mutex
	rnd   *rand.Rand

	lnMu sync.Mutex
	srv  *http.Server
	url  string
}

var _ http.Handler = (*Server)(nil)

// New returns a Server that is not listening yet; serve it with ServeHTTP or call Start instead.
func New(opts Options) *Server {
	opts = withDefaults(opts)
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	s := &Server{
		opts:   opts,
		rnd:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		faults: newFaults(),
		sts:    newSTSState(),
		imds:   newIMDSState(),
	}
	s.state = newState(s)
	s.mux = s.routes()
	return s
}

// Start returns a Server listening on 127.0.0.1 at a free port.
func Start(opts Options) (*Server, error) {
	return StartAt(opts, "127.0.0.1:0")
}

// StartAt returns a Server listening on addr (host:port; port 0 picks a free one).
func StartAt(opts Options, addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeaws: listen on %q: %w", addr, err)
	}
	s := New(opts)
	s.lnMu.Lock()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.url = "http://" + ln.Addr().String()
	srv := s.srv
	s.lnMu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return s, nil
}

// URL is the base URL of the listening server (http://127.0.0.1:PORT): one endpoint for EFS, EC2, STS and IMDS.
// It is empty for a Server made with New.
func (s *Server) URL() string {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	return s.url
}

// Close stops the listener and closes open connections. It is a no-op for a Server made with New.
func (s *Server) Close() error {
	s.lnMu.Lock()
	srv := s.srv
	s.srv = nil
	s.lnMu.Unlock()
	if srv == nil {
		return nil
	}
	if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("fakeaws: close: %w", err)
	}
	return nil
}

// Options returns the effective options (after defaults).
func (s *Server) Options() Options { return s.opts }

// ServeHTTP routes a request to the EFS, EC2, STS or IMDS handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	s.efsRoutes(mux)
	s.imdsRoutes(mux)
	mux.HandleFunc("POST /{$}", s.serveQuery)
	mux.HandleFunc("GET /{$}", s.serveQuery)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.count("UnknownOperation", r)
		writeEFSError(w, r, errUnknownOperation(r.Method, r.URL.Path))
	})
	return mux
}

// ZoneIDPrefix returns the zone ID prefix used for default zones of a region: the first letters of its parts
// and its number, as AWS names them (us-east-1 → use1, eu-west-3 → euw3, ap-southeast-2 → apse2).
func ZoneIDPrefix(region string) string {
	parts := strings.Split(region, "-")
	if len(parts) < 3 {
		return strings.ReplaceAll(region, "-", "")
	}
	dir := parts[1]
	short := map[string]string{
		"east": "e", "west": "w", "north": "n", "south": "s", "central": "c",
		"northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
	}[dir]
	if short == "" {
		short = dir[:1]
	}
	return parts[0] + short + parts[len(parts)-1]
}

func withDefaults(o Options) Options {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.AccountID == "" {
		o.AccountID = "123456789012"
	}
	if o.AccessPointQuota <= 0 {
		o.AccessPointQuota = 10000
	}
	if len(o.Zones) == 0 {
		p := ZoneIDPrefix(o.Region)
		o.Zones = []Zone{
			{Name: o.Region + "a", ID: p + "-az1"},
			{Name: o.Region + "b", ID: p + "-az2"},
			{Name: o.Region + "c", ID: p + "-az3"},
		}
	} else {
		o.Zones = append([]Zone(nil), o.Zones...)
	}
	if o.InstanceZone == "" {
		o.InstanceZone = o.Zones[0].Name
	}
	if o.InstanceID == "" {
		o.InstanceID = "i-0123456789abcdef0"
	}
	return o
}

// zoneByName returns the zone with that name.
func (s *Server) zoneByName(name string) (Zone, int, bool) {
	for i, z := range s.opts.Zones {
		if z.Name == name {
			return z, i, true
		}
	}
	return Zone{}, -1, false
}

// zoneByID returns the zone with that zone ID.
func (s *Server) zoneByID(id string) (Zone, int, bool) {
	for i, z := range s.opts.Zones {
		if z.ID == id {
			return z, i, true
		}
	}
	return Zone{}, -1, false
}

// randHex returns n random lower-case hex digits.
func (s *Server) randHex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	s.rndMu.Lock()
	for i := range b {
		b[i] = digits[s.rnd.IntN(16)]
	}
	s.rndMu.Unlock()
	return string(b)
}

// randFloat returns a random number in [0, 1).
func (s *Server) randFloat() float64 {
	s.rndMu.Lock()
	defer s.rndMu.Unlock()
	return s.rnd.Float64()
}

// requestID returns a fresh request ID in the UUID shape AWS uses.
func (s *Server) requestID() string {
	h := s.randHex(32)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
