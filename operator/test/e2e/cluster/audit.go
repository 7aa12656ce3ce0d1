package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// auditPolicy records, at Metadata level, every request made by a ServiceAccount: who asked for what and what the
// API server answered. The admin client of the tests is not recorded.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
`

// AuditEvent is one request from the API server's audit log, with the fields the tests read.
type AuditEvent struct {
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// UserAgent names the program (csi-provisioner, the operator, ...) when several share a ServiceAccount.
	UserAgent string `json:"userAgent"`
	// RequestReceived places the request among the events a failing test prints.
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// Code is the HTTP status the API server answered with (0 when unknown).
func (e AuditEvent) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// String is "<time> <user> <verb> <resource>/<name> -> <code> (<program>)", the program being the user agent's
// first word.
func (e AuditEvent) String() string {
	what := e.RequestURI
	if e.ObjectRef != nil {
		what = e.ObjectRef.Resource + "/" + e.ObjectRef.Name
		if e.ObjectRef.Subresource != "" {
			what += "/" + e.ObjectRef.Subresource
		}
	}
	program, _, _ := strings.Cut(e.UserAgent, " ")
	return fmt.Sprintf("%s %s %s %s -> %d (%s)", e.RequestReceived.UTC().Format("15:04:05.000"), e.User.Username, e.Verb, what, e.Code(), program)
}

func auditFiles(dir string) (policy, log string, err error) {
	policy, log = filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	return policy, log, os.WriteFile(policy, []byte(auditPolicy), 0o644)
}

// AuditEvents returns the completed requests of ServiceAccounts so far, in the order the API server logged them.
func (c *Cluster) AuditEvents() ([]AuditEvent, error) {
	f, err := os.Open(filepath.Join(c.dir, "audit.log"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			// The API server may be writing this line right now.
			continue
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// ServiceAccountUser is the user name a ServiceAccount's token authenticates as.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
