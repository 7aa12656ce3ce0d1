package fakeaws

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// imdsState holds the IMDSv2 session tokens issued and their expiry.
type imdsState struct {
	mu     sync.Mutex
	tokens map[string]time.Time
}

func newIMDSState() *imdsState { return &imdsState{tokens: map[string]time.Time{}} }

const (
	imdsTTLHeader   = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
	imdsTokenHeader = "X-Aws-Ec2-Metadata-Token"
)

// imdsRoutes registers the instance metadata service: IMDSv2 only (every GET needs a session token).
// Operations for faults and counters: "GetMetadataToken" (PUT /latest/api/token) and "GetMetadata" (GETs).
func (s *Server) imdsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("PUT /latest/api/token", s.imdsToken)
	mux.HandleFunc("GET /latest/meta-data/{path...}", s.imdsGet)
	mux.HandleFunc("GET /latest/dynamic/{path...}", s.imdsGet)
}

func imdsError(w http.ResponseWriter, status int) {
	http.Error(w, http.StatusText(status), status)
}

// imdsToken: PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds (1–21600).
func (s *Server) imdsToken(w http.ResponseWriter, r *http.Request) {
	s.count("GetMetadataToken", r)
	if e := s.preflight(svcIMDS, "GetMetadataToken", r); e != nil {
		imdsError(w, e.Status)
		return
	}
	if r.Header.Get("X-Forwarded-For") != "" {
		imdsError(w, http.StatusForbidden)
		return
	}
	ttl, err := strconv.Atoi(r.Header.Get(imdsTTLHeader))
	if err != nil || ttl < 1 || ttl > 21600 {
		imdsError(w, http.StatusBadRequest)
		return
	}
	token := "AQAEA" + s.randHex(51)
	s.imds.mu.Lock()
	s.imds.tokens[token] = time.Now().Add(time.Duration(ttl) * time.Second)
	s.imds.mu.Unlock()
	w.Header().Set(imdsTTLHeader, strconv.Itoa(ttl))
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(token))
}

// imdsGet serves metadata to callers with a valid session token; 401 otherwise.
func (s *Server) imdsGet(w http.ResponseWriter, r *http.Request) {
	s.count("GetMetadata", r)
	if e := s.preflight(svcIMDS, "GetMetadata", r); e != nil {
		imdsError(w, e.Status)
		return
	}
	s.imds.mu.Lock()
	exp, ok := s.imds.tokens[r.Header.Get(imdsTokenHeader)]
	s.imds.mu.Unlock()
	if !ok || time.Now().After(exp) {
		imdsError(w, http.StatusUnauthorized)
		return
	}
	body, ok := s.metadata(r.URL.Path)
	if !ok {
		imdsError(w, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(body))
}

// metadata returns the document at an IMDS path.
func (s *Server) metadata(path string) (string, bool) {
	zone, zi, _ := s.zoneByName(s.opts.InstanceZone)
	ip := "172.31.0.10"
	if zi >= 0 {
		ip = subnetIP(zi, 10)
	} else {
		zone = Zone{Name: s.opts.InstanceZone}
	}
	values := map[string]string{
		"instance-id":                    s.opts.InstanceID,
		"instance-type":                  "m5.large",
		"ami-id":                         "ami-0abcdef1234567890",
		"local-ipv4":                     ip,
		"local-hostname":                 "ip-" + strings.ReplaceAll(ip, ".", "-") + ".ec2.internal",
		"hostname":                       "ip-" + strings.ReplaceAll(ip, ".", "-") + ".ec2.internal",
		"mac":                            "0e:12:34:56:78:9a",
		"placement/availability-zone":    zone.Name,
		"placement/availability-zone-id": zone.ID,
		"placement/region":               s.opts.Region,
	}
	switch {
	case path == "/latest/dynamic/instance-identity/document":
		return s.identityDocument(zone.Name, ip), true
	case path == "/latest/dynamic/":
		return "instance-identity/", true
	case path == "/latest/dynamic/instance-identity/":
		return "document", true
	case path == "/latest/meta-data/" || path == "/latest/meta-data":
		return "ami-id\nhostname\ninstance-id\ninstance-type\nlocal-hostname\nlocal-ipv4\nmac\nplacement/", true
	case path == "/latest/meta-data/placement/":
		return "availability-zone\navailability-zone-id\nregion", true
	}
	v, ok := values[strings.TrimPrefix(path, "/latest/meta-data/")]
	return v, ok && strings.HasPrefix(path, "/latest/meta-data/")
}

// identityDocument returns the instance identity document.
func (s *Server) identityDocument(zone, ip string) string {
	doc := map[string]any{
		"accountId": s.opts.AccountID, "architecture": "x86_64", "availabilityZone": zone,
		"billingProducts": nil, "devpayProductCodes": nil, "marketplaceProductCodes": nil,
		"imageId": "ami-0abcdef1234567890", "instanceId": s.opts.InstanceID, "instanceType": "m5.large",
		"kernelId": nil, "pendingTime": "2024-01-02T03:04:05Z", "privateIp": ip, "ramdiskId": nil,
		"region": s.opts.Region, "version": "2017-09-30",
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return string(b)
}
