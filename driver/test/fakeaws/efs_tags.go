package fakeaws

import (
	"net/http"
	"strings"
)

// resourceRef is a file system or access point named by ID or ARN in /resource-tags/{ResourceId}.
type resourceRef struct {
	fsID, apID string
}

func parseResourceID(raw string) (resourceRef, *apiError) {
	switch {
	case strings.HasPrefix(raw, "fsap-") || strings.Contains(raw, ":access-point/"):
		id, e := accessPointID("ResourceId", raw)
		return resourceRef{apID: id}, e
	case strings.HasPrefix(raw, "fs-") || strings.Contains(raw, ":file-system/"):
		id, e := fileSystemID("ResourceId", raw)
		return resourceRef{fsID: id}, e
	}
	return resourceRef{}, errBadRequest("ResourceId %q is not valid: want a file system or access point ID or ARN",
		truncate(raw, 140))
}

// tagsOf returns a pointer to the tags of the resource, and to its Name field. Callers hold st.mu.
func (st *state) tagsOf(ref resourceRef) (*[]Tag, *string, *apiError) {
	if ref.apID != "" {
		a := st.aps[ref.apID]
		if a == nil {
			return nil, nil, errAccessPointNotFound(ref.apID)
		}
		return &a.ap.Tags, &a.ap.Name, nil
	}
	rec := st.fs[ref.fsID]
	if rec == nil {
		return nil, nil, errFileSystemNotFound(ref.fsID)
	}
	return &rec.fs.Tags, &rec.fs.Name, nil
}

// tagResource: POST /2015-02-01/resource-tags/{ResourceId} with {"Tags": [...]}.
func (s *Server) tagResource(r *http.Request) (int, any, *apiError) {
	ref, e := parseResourceID(r.PathValue("ResourceId"))
	if e != nil {
		return 0, nil, e
	}
	var req struct{ Tags []Tag }
	if e := decodeJSONBody(r, &req); e != nil {
		return 0, nil, e
	}
	if len(req.Tags) == 0 {
		return 0, nil, errBadRequest("Tags is required: want 1 to 50 tags")
	}
	if e := validateTags("Tags", req.Tags); e != nil {
		return 0, nil, e
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	tags, name, e := st.tagsOf(ref)
	if e != nil {
		return 0, nil, e
	}
	merged := mergeTags(*tags, req.Tags)
	if e := validateTags("Tags", merged); e != nil {
		return 0, nil, e
	}
	*tags, *name = merged, nameTag(merged)
	return http.StatusOK, nil, nil
}

// untagResource: DELETE /2015-02-01/resource-tags/{ResourceId}?tagKeys=k1&tagKeys=k2.
func (s *Server) untagResource(r *http.Request) (int, any, *apiError) {
	ref, e := parseResourceID(r.PathValue("ResourceId"))
	if e != nil {
		return 0, nil, e
	}
	keys := r.URL.Query()["tagKeys"]
	if len(keys) == 0 {
		return 0, nil, errBadRequest("tagKeys is required: want 1 to 50 tag keys")
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	tags, name, e := st.tagsOf(ref)
	if e != nil {
		return 0, nil, e
	}
	*tags = removeTags(*tags, keys)
	*name = nameTag(*tags)
	return http.StatusOK, nil, nil
}

// listTagsForResource: GET /2015-02-01/resource-tags/{ResourceId}?MaxResults=&NextToken=. Tags are paged by
// position (a page token holds the index of the last tag returned).
func (s *Server) listTagsForResource(r *http.Request) (int, any, *apiError) {
	raw := r.PathValue("ResourceId")
	ref, e := parseResourceID(raw)
	if e != nil {
		return 0, nil, e
	}
	q := r.URL.Query()
	size, e := parsePageSize("MaxResults", q.Get("MaxResults"), 100, 100)
	if e != nil {
		return 0, nil, e
	}
	scope := ref.fsID + ref.apID
	after, e := decodePageToken("NextToken", q.Get("NextToken"), scope)
	if e != nil {
		return 0, nil, e
	}
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	tags, _, e := st.tagsOf(ref)
	if e != nil {
		return 0, nil, e
	}
	out := struct {
		Tags      []Tag
		NextToken string `json:",omitempty"`
	}{Tags: []Tag{}}
	start := int(min(after, uint64(len(*tags))))
	end := min(start+size, len(*tags))
	out.Tags = append(out.Tags, (*tags)[start:end]...)
	if end < len(*tags) {
		out.NextToken = encodePageToken(scope, uint64(end))
	}
	return http.StatusOK, out, nil
}
