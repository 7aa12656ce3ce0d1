package fakeaws

import (
	"encoding/xml"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stsState holds the roles STS lets callers assume and the temporary credentials it has issued.
type stsState struct {
	mu    sync.Mutex
	roles map[string]string     // role ARN → required external ID ("" = none required)
	creds map[string]issuedCred // access key ID → what it was issued for
}

type issuedCred struct {
	roleARN, session string
	expires          time.Time
}

func newSTSState() *stsState {
	return &stsState{roles: map[string]string{}, creds: map[string]issuedCred{}}
}

// AddRole lets STS AssumeRole (and AssumeRoleWithWebIdentity) succeed for roleARN. With a non-empty externalID,
// AssumeRole must pass exactly that ExternalId; with an empty one, any ExternalId (or none) is accepted, as with
// a trust policy without an sts:ExternalId condition.
func (s *Server) AddRole(arn, externalID string) {
	s.sts.mu.Lock()
	defer s.sts.mu.Unlock()
	s.sts.roles[arn] = externalID
}

// AssumedRoleKeys returns the access key IDs issued for a role by AssumeRole / AssumeRoleWithWebIdentity.
func (s *Server) AssumedRoleKeys(roleARN string) []string {
	s.sts.mu.Lock()
	defer s.sts.mu.Unlock()
	var out []string
	for k, c := range s.sts.creds {
		if c.roleARN == roleARN {
			out = append(out, k)
		}
	}
	return out
}

var (
	roleARNPattern     = regexp.MustCompile(`^arn:aws[-a-z]*:iam::(\d{12}):role/([\w+=,.@/-]{1,512})$`)
	sessionNamePattern = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	externalIDPattern  = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
)

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type assumedRoleUser struct {
	AssumedRoleID string `xml:"AssumedRoleId"`
	Arn           string `xml:"Arn"`
}

type responseMetadata struct {
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

func (m *responseMetadata) setRequestID(id string) { m.RequestID = id }

type assumeRoleResponse struct {
	XMLName     xml.Name        `xml:"https://sts.amazonaws.com/doc/2011-06-15/ AssumeRoleResponse"`
	Credentials stsCredentials  `xml:"AssumeRoleResult>Credentials"`
	User        assumedRoleUser `xml:"AssumeRoleResult>AssumedRoleUser"`
	PackedSize  int             `xml:"AssumeRoleResult>PackedPolicySize"`
	responseMetadata
}

type assumeRoleWebResponse struct {
	XMLName     xml.Name        `xml:"https://sts.amazonaws.com/doc/2011-06-15/ AssumeRoleWithWebIdentityResponse"`
	Credentials stsCredentials  `xml:"AssumeRoleWithWebIdentityResult>Credentials"`
	User        assumedRoleUser `xml:"AssumeRoleWithWebIdentityResult>AssumedRoleUser"`
	Subject     string          `xml:"AssumeRoleWithWebIdentityResult>SubjectFromWebIdentityToken"`
	Audience    string          `xml:"AssumeRoleWithWebIdentityResult>Audience"`
	Provider    string          `xml:"AssumeRoleWithWebIdentityResult>Provider"`
	responseMetadata
}

type callerIdentityResponse struct {
	XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ GetCallerIdentityResponse"`
	Arn     string   `xml:"GetCallerIdentityResult>Arn"`
	UserID  string   `xml:"GetCallerIdentityResult>UserId"`
	Account string   `xml:"GetCallerIdentityResult>Account"`
	responseMetadata
}

func stsValidation(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "ValidationError", format, args...)
}

// roleRequest validates the parameters AssumeRole and AssumeRoleWithWebIdentity share.
func roleRequest(r *http.Request) (arn, session string, duration time.Duration, e *apiError) {
	arn, session = r.Form.Get("RoleArn"), r.Form.Get("RoleSessionName")
	if !roleARNPattern.MatchString(arn) {
		return "", "", 0, stsValidation("RoleArn %q is not valid: want arn:aws:iam::<12-digit account>:role/<name>",
			truncate(arn, 200))
	}
	if !sessionNamePattern.MatchString(session) {
		return "", "", 0, stsValidation("RoleSessionName %q is not valid: want 2 to 64 of [A-Za-z0-9_+=,.@-]",
			truncate(session, 80))
	}
	duration = time.Hour
	if raw := r.Form.Get("DurationSeconds"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 900 || n > 43200 {
			return "", "", 0, stsValidation("DurationSeconds %q is not valid: want an integer from 900 to 43200",
				truncate(raw, 20))
		}
		duration = time.Duration(n) * time.Second
	}
	return arn, session, duration, nil
}

// assumeRole: STS AssumeRole. Only roles added with AddRole can be assumed, with their external ID.
func (s *Server) assumeRole(r *http.Request) (any, *apiError) {
	arn, session, duration, e := roleRequest(r)
	if e != nil {
		return nil, e
	}
	ext := r.Form.Get("ExternalId")
	if ext != "" && (len(ext) < 2 || len(ext) > 1224 || !externalIDPattern.MatchString(ext)) {
		return nil, stsValidation("ExternalId is not valid: want 2 to 1224 of [A-Za-z0-9_+=,.@:/-]")
	}
	s.sts.mu.Lock()
	want, known := s.sts.roles[arn]
	s.sts.mu.Unlock()
	if !known || (want != "" && want != ext) {
		return nil, newError(http.StatusForbidden, "AccessDenied",
			"User: %s is not authorized to perform: sts:AssumeRole on resource: %s", s.callerARN(r), arn)
	}
	creds, user := s.issue(arn, session, duration)
	return &assumeRoleResponse{Credentials: creds, User: user, PackedSize: 6}, nil
}

// assumeRoleWithWebIdentity: STS AssumeRoleWithWebIdentity. The request is unsigned; any token of at least 4
// characters (the contents of the projected token file) is accepted for a role added with AddRole.
func (s *Server) assumeRoleWithWebIdentity(r *http.Request) (any, *apiError) {
	arn, session, duration, e := roleRequest(r)
	if e != nil {
		return nil, e
	}
	token := r.Form.Get("WebIdentityToken")
	if len(token) < 4 {
		return nil, newError(http.StatusBadRequest, "InvalidIdentityToken",
			"WebIdentityToken is not valid: want the contents of the web identity token file")
	}
	s.sts.mu.Lock()
	_, known := s.sts.roles[arn]
	s.sts.mu.Unlock()
	if !known {
		return nil, newError(http.StatusForbidden, "AccessDenied",
			"Not authorized to perform sts:AssumeRoleWithWebIdentity on resource: %s", arn)
	}
	creds, user := s.issue(arn, session, duration)
	return &assumeRoleWebResponse{
		Credentials: creds, User: user, Subject: "system:serviceaccount:fakeaws:" + session,
		Audience: "sts.amazonaws.com", Provider: "arn:aws:iam::" + s.opts.AccountID + ":oidc-provider/fakeaws",
	}, nil
}

// issue makes fresh temporary credentials for a role session.
func (s *Server) issue(roleARN, session string, duration time.Duration) (stsCredentials, assumedRoleUser) {
	if s.opts.CredentialDuration > 0 {
		duration = s.opts.CredentialDuration
	}
	expires := time.Now().Add(duration).UTC()
	key := "ASIA" + strings.ToUpper(s.randHex(16))
	s.sts.mu.Lock()
	s.sts.creds[key] = issuedCred{roleARN: roleARN, session: session, expires: expires}
	s.sts.mu.Unlock()
	m := roleARNPattern.FindStringSubmatch(roleARN)
	name := m[2][strings.LastIndex(m[2], "/")+1:]
	return stsCredentials{
			AccessKeyID: key, SecretAccessKey: s.randHex(40), SessionToken: "FQoGZXIvYXdzE" + s.randHex(64),
			Expiration: expires.Format(time.RFC3339),
		}, assumedRoleUser{
			AssumedRoleID: "AROA" + strings.ToUpper(s.randHex(17)) + ":" + session,
			Arn:           "arn:aws:sts::" + m[1] + ":assumed-role/" + name + "/" + session,
		}
}

// getCallerIdentity: STS GetCallerIdentity, answering for the signing access key.
func (s *Server) getCallerIdentity(r *http.Request) (any, *apiError) {
	key := accessKeyID(r)
	if key == "" {
		return nil, newError(http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token")
	}
	s.sts.mu.Lock()
	c, ok := s.sts.creds[key]
	s.sts.mu.Unlock()
	if ok {
		account := roleARNPattern.FindStringSubmatch(c.roleARN)[1]
		return &callerIdentityResponse{Arn: s.callerARN(r), UserID: key + ":" + c.session, Account: account}, nil
	}
	return &callerIdentityResponse{Arn: s.callerARN(r), UserID: key, Account: s.opts.AccountID}, nil
}

// callerARN names the caller of a request for messages: the assumed role for credentials STS issued, else an
// IAM user of the account.
func (s *Server) callerARN(r *http.Request) string {
	s.sts.mu.Lock()
	c, ok := s.sts.creds[accessKeyID(r)]
	s.sts.mu.Unlock()
	if ok {
		m := roleARNPattern.FindStringSubmatch(c.roleARN)
		return "arn:aws:sts::" + m[1] + ":assumed-role/" + m[2][strings.LastIndex(m[2], "/")+1:] + "/" + c.session
	}
	return "arn:aws:iam::" + s.opts.AccountID + ":user/fakeaws"
}

// checkCredentials rejects calls signed with temporary credentials that expired (more than a second ago, to
// allow for a request signed just before expiry), with the service's ExpiredToken error.
func (s *Server) checkCredentials(svc service, r *http.Request) *apiError {
	key := accessKeyID(r)
	if !strings.HasPrefix(key, "ASIA") {
		return nil
	}
	s.sts.mu.Lock()
	c, ok := s.sts.creds[key]
	s.sts.mu.Unlock()
	if !ok || time.Now().Before(c.expires.Add(time.Second)) {
		return nil
	}
	code := "ExpiredToken"
	if svc == svcEFS {
		code = "ExpiredTokenException"
	}
	return newError(http.StatusForbidden, code, "The security token included in the request is expired")
}
