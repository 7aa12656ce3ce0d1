package fakeaws

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
)

// apiError is an error as a service reports it: a code, a message, an HTTP status and, for some EFS errors,
// extra members of the error body (AccessPointId, FileSystemId).
type apiError struct {
	Status  int
	Code    string
	Message string
	Extra   map[string]string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// EFS errors, with the HTTP statuses of the EFS service model.

func errBadRequest(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "BadRequest", format, args...)
}

func errFileSystemNotFound(id string) *apiError {
	return newError(http.StatusNotFound, "FileSystemNotFound", "File system '%s' does not exist.", id)
}

func errAccessPointNotFound(id string) *apiError {
	return newError(http.StatusNotFound, "AccessPointNotFound", "Access point '%s' does not exist.", id)
}

func errMountTargetNotFound(id string) *apiError {
	return newError(http.StatusNotFound, "MountTargetNotFound", "Mount target '%s' does not exist.", id)
}

func errIncorrectFileSystemLifeCycleState(id, state string) *apiError {
	return newError(http.StatusConflict, "IncorrectFileSystemLifeCycleState",
		"File system '%s' is in life cycle state '%s'; the operation needs 'available'.", id, state)
}

func errUnknownOperation(method, path string) *apiError {
	return newError(http.StatusNotFound, "UnknownOperationException", "fakeaws does not serve %s %s", method, path)
}

// writeEFSError writes an error the way EFS (REST-JSON) does: the x-amzn-ErrorType header and a JSON body with
// ErrorCode and Message (plus the error's extra members).
func writeEFSError(w http.ResponseWriter, _ *http.Request, e *apiError) {
	body := map[string]string{"ErrorCode": e.Code, "Message": e.Message}
	for k, v := range e.Extra {
		body[k] = v
	}
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	writeJSON(w, e.Status, body)
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fakeaws: encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeXML writes v as an XML document with the given status.
func writeXML(w http.ResponseWriter, status int, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, "fakeaws: encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

// ec2ErrorResponse is the EC2 query protocol's error document.
type ec2ErrorResponse struct {
	XMLName   xml.Name `xml:"Response"`
	Errors    []ec2Err `xml:"Errors>Error"`
	RequestID string   `xml:"RequestID"`
}

type ec2Err struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

func writeEC2Error(w http.ResponseWriter, requestID string, e *apiError) {
	writeXML(w, e.Status, ec2ErrorResponse{Errors: []ec2Err{{Code: e.Code, Message: e.Message}}, RequestID: requestID})
}

// stsErrorResponse is the AWS query protocol's error document, as STS sends it.
type stsErrorResponse struct {
	XMLName   xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ ErrorResponse"`
	Type      string   `xml:"Error>Type"`
	Code      string   `xml:"Error>Code"`
	Message   string   `xml:"Error>Message"`
	RequestID string   `xml:"RequestId"`
}

func writeSTSError(w http.ResponseWriter, requestID string, e *apiError) {
	typ := "Sender"
	if e.Status >= 500 {
		typ = "Receiver"
	}
	writeXML(w, e.Status, stsErrorResponse{Type: typ, Code: e.Code, Message: e.Message, RequestID: requestID})
}

// throttleError and serverError are the errors injected by faults, per protocol.

func throttleError(svc service) *apiError {
	switch svc {
	case svcEC2:
		return newError(http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
	case svcSTS:
		return newError(http.StatusBadRequest, "Throttling", "Rate exceeded")
	case svcIMDS:
		return newError(http.StatusTooManyRequests, "TooManyRequests", "Too Many Requests")
	default:
		return newError(http.StatusTooManyRequests, "ThrottlingException", "Rate exceeded")
	}
}

func serverError(svc service, status int) *apiError {
	unavailable := status == http.StatusServiceUnavailable
	switch svc {
	case svcEC2:
		if unavailable {
			return newError(status, "Unavailable", "The server is overloaded and cannot handle the request.")
		}
		return newError(status, "InternalError", "An internal error has occurred.")
	case svcSTS:
		if unavailable {
			return newError(status, "ServiceUnavailable", "Service unavailable.")
		}
		return newError(status, "InternalFailure", "An internal error occurred.")
	case svcIMDS:
		return newError(status, http.StatusText(status), "%s", http.StatusText(status))
	default:
		if unavailable {
			return newError(status, "ServiceUnavailableException", "Service unavailable.")
		}
		return newError(status, "InternalServerError", "An internal error occurred (injected by fakeaws).")
	}
}
