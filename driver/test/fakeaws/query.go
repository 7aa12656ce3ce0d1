package fakeaws

import (
	"net/http"
)

// queryHandler handles one EC2 or STS query-protocol action; it returns the response document or an error.
type queryHandler func(r *http.Request) (any, *apiError)

// serveQuery dispatches POST / (and GET /) query-protocol requests by their Action parameter: EC2
// DescribeAvailabilityZones and STS AssumeRole, AssumeRoleWithWebIdentity and GetCallerIdentity.
func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request) {
	reqID := s.requestID()
	if err := r.ParseForm(); err != nil {
		s.count("UnknownOperation", r)
		writeEC2Error(w, reqID, newError(http.StatusBadRequest, "MalformedQueryString", "%v", err))
		return
	}
	action := r.Form.Get("Action")
	var (
		svc service
		h   queryHandler
	)
	switch action {
	case "DescribeAvailabilityZones":
		svc, h = svcEC2, s.describeAvailabilityZones
	case "AssumeRole":
		svc, h = svcSTS, s.assumeRole
	case "AssumeRoleWithWebIdentity":
		svc, h = svcSTS, s.assumeRoleWithWebIdentity
	case "GetCallerIdentity":
		svc, h = svcSTS, s.getCallerIdentity
	default:
		s.count("UnknownOperation", r)
		writeEC2Error(w, reqID, newError(http.StatusBadRequest, "InvalidAction",
			"The action %q is not valid for this web service; fakeaws serves DescribeAvailabilityZones, "+
				"AssumeRole, AssumeRoleWithWebIdentity and GetCallerIdentity", action))
		return
	}
	s.count(action, r)
	writeErr := writeEC2Error
	if svc == svcSTS {
		writeErr = writeSTSError
	}
	if e := s.preflight(svc, action, r); e != nil {
		writeErr(w, reqID, e)
		return
	}
	doc, e := h(r)
	if e != nil {
		writeErr(w, reqID, e)
		return
	}
	setRequestID(doc, reqID)
	writeXML(w, http.StatusOK, doc)
}

// requestIDSetter is implemented by response documents that carry a request ID.
type requestIDSetter interface{ setRequestID(string) }

func setRequestID(doc any, id string) {
	if d, ok := doc.(requestIDSetter); ok {
		d.setRequestID(id)
	}
}
