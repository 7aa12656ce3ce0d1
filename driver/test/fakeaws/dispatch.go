package fakeaws

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// service names the protocol family of an operation, which decides how errors are written.
type service int

const (
	svcEFS service = iota
	svcEC2
	svcSTS
	svcIMDS
)

// efsHandler handles one EFS operation: it returns the HTTP status and the response document (nil for none),
// or an error.
type efsHandler func(r *http.Request) (int, any, *apiError)

// efsRoutes registers the EFS REST-JSON operations (API version 2015-02-01).
func (s *Server) efsRoutes(mux *http.ServeMux) {
	const v = "/2015-02-01"
	ops := []struct {
		pattern, api string
		h            efsHandler
	}{
		{"POST " + v + "/file-systems", "CreateFileSystem", s.createFileSystem},
		{"GET " + v + "/file-systems", "DescribeFileSystems", s.describeFileSystems},
		{"DELETE " + v + "/file-systems/{FileSystemId}", "DeleteFileSystem", s.deleteFileSystem},
		{"POST " + v + "/mount-targets", "CreateMountTarget", s.createMountTarget},
		{"GET " + v + "/mount-targets", "DescribeMountTargets", s.describeMountTargets},
		{"DELETE " + v + "/mount-targets/{MountTargetId}", "DeleteMountTarget", s.deleteMountTarget},
		{"POST " + v + "/access-points", "CreateAccessPoint", s.createAccessPoint},
		{"GET " + v + "/access-points", "DescribeAccessPoints", s.describeAccessPoints},
		{"DELETE " + v + "/access-points/{AccessPointId}", "DeleteAccessPoint", s.deleteAccessPoint},
		{"POST " + v + "/resource-tags/{ResourceId}", "TagResource", s.tagResource},
		{"DELETE " + v + "/resource-tags/{ResourceId}", "UntagResource", s.untagResource},
		{"GET " + v + "/resource-tags/{ResourceId}", "ListTagsForResource", s.listTagsForResource},
	}
	for _, op := range ops {
		mux.HandleFunc(op.pattern, s.efsOp(op.api, op.h))
	}
}

// efsOp wraps an EFS handler with counting, fault injection and the REST-JSON response encoding.
func (s *Server) efsOp(api string, h efsHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.count(api, r)
		w.Header().Set("X-Amzn-RequestId", s.requestID())
		if e := s.preflight(svcEFS, api, r); e != nil {
			writeEFSError(w, r, e)
			return
		}
		status, body, e := h(r)
		if e == nil && s.loseReply(api) {
			e = serverError(svcEFS, http.StatusInternalServerError)
		}
		if e != nil {
			writeEFSError(w, r, e)
			return
		}
		if body == nil {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, body)
	}
}

// preflight applies the operation's fault and rejects expired temporary credentials.
func (s *Server) preflight(svc service, api string, r *http.Request) *apiError {
	switch kind, status := s.applyFault(api, r); kind {
	case faultThrottle:
		return throttleError(svc)
	case faultError:
		return serverError(svc, status)
	}
	if svc != svcIMDS {
		if e := s.checkCredentials(svc, r); e != nil {
			return e
		}
	}
	return nil
}

// decodeJSONBody decodes a JSON request body into v; an empty body leaves v as it is.
func decodeJSONBody(r *http.Request, v any) *apiError {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return errBadRequest("reading the request body: %v", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errBadRequest("the request body is not valid JSON for this operation: %v", err)
	}
	return nil
}
