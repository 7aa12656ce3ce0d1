package fakeaws

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"
)

type createAccessPointRequest struct {
	ClientToken  *string
	FileSystemId *string
	PosixUser    *struct {
		Uid, Gid      *int64
		SecondaryGids []int64
	}
	RootDirectory *struct {
		Path         *string
		CreationInfo *struct {
			OwnerUid, OwnerGid *int64
			Permissions        *string
		}
	}
	Tags []Tag
}

// createAccessPoint: POST /2015-02-01/access-points. Client tokens are unique per account and region, as in
// EFS: a token already used (on any file system, with any parameters) fails with AccessPointAlreadyExists
// carrying the existing AccessPointId. Beyond the per-file-system quota it fails with AccessPointLimitExceeded.
func (s *Server) createAccessPoint(r *http.Request) (int, any, *apiError) {
	var req createAccessPointRequest
	if e := decodeJSONBody(r, &req); e != nil {
		return 0, nil, e
	}
	ap, e := accessPointFromRequest(req)
	if e != nil {
		return 0, nil, e
	}
	now := time.Now()
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := st.fs[ap.FileSystemId]
	if rec == nil {
		return 0, nil, errFileSystemNotFound(ap.FileSystemId)
	}
	if state := lifeCycle(rec.fs.LifeCycleState, rec.readyAt, now); state != "available" {
		return 0, nil, errIncorrectFileSystemLifeCycleState(ap.FileSystemId, state)
	}
	if old := st.apByToken[ap.ClientToken]; old != nil {
		e := newError(http.StatusConflict, "AccessPointAlreadyExists",
			"Access point '%s' already exists with client token '%s'", old.ap.AccessPointId, ap.ClientToken)
		e.Extra = map[string]string{"AccessPointId": old.ap.AccessPointId}
		return 0, nil, e
	}
	if len(rec.aps) >= s.opts.AccessPointQuota {
		return 0, nil, newError(http.StatusForbidden, "AccessPointLimitExceeded",
			"File system '%s' already has the maximum of %d access points", ap.FileSystemId, s.opts.AccessPointQuota)
	}
	ap.LifeCycleState = "creating"
	out := st.insertAccessPoint(rec, ap, now.Add(s.opts.AccessPointCreateDelay))
	return http.StatusOK, out.ap.clone().wire(), nil
}

// accessPointFromRequest validates a CreateAccessPoint request as EFS does and returns the access point it asks
// for.
func accessPointFromRequest(req createAccessPointRequest) (AccessPoint, *apiError) {
	var ap AccessPoint
	if req.ClientToken == nil || len(*req.ClientToken) < 1 || len(*req.ClientToken) > 64 {
		return ap, errBadRequest("ClientToken is required: want 1 to 64 characters")
	}
	ap.ClientToken = *req.ClientToken
	if req.FileSystemId == nil {
		return ap, errBadRequest("FileSystemId is required: want a file system ID (fs-[0-9a-f]{8,40}) or its ARN")
	}
	id, e := fileSystemID("FileSystemId", *req.FileSystemId)
	if e != nil {
		return ap, e
	}
	ap.FileSystemId = id
	if p := req.PosixUser; p != nil {
		if p.Uid == nil || p.Gid == nil {
			return ap, errBadRequest("PosixUser needs both Uid and Gid")
		}
		if e := checkPOSIXIDs("PosixUser", *p.Uid, *p.Gid); e != nil {
			return ap, e
		}
		if len(p.SecondaryGids) > 16 {
			return ap, errBadRequest("PosixUser.SecondaryGids has %d entries: at most 16 are allowed",
				len(p.SecondaryGids))
		}
		for _, g := range p.SecondaryGids {
			if g < 0 || g > maxPOSIXID {
				return ap, errBadRequest("PosixUser.SecondaryGids entry %d is not valid: want 0 to %d", g, int64(maxPOSIXID))
			}
		}
		ap.PosixUser = &PosixUser{Uid: *p.Uid, Gid: *p.Gid, SecondaryGids: append([]int64(nil), p.SecondaryGids...)}
	}
	if rd := req.RootDirectory; rd != nil {
		if rd.Path != nil {
			if e := validateRootPath(*rd.Path); e != nil {
				return ap, e
			}
			ap.RootDirectory.Path = *rd.Path
		}
		if ci := rd.CreationInfo; ci != nil {
			if ci.OwnerUid == nil || ci.OwnerGid == nil || ci.Permissions == nil {
				return ap, errBadRequest("RootDirectory.CreationInfo needs OwnerUid, OwnerGid and Permissions")
			}
			if e := checkPOSIXIDs("RootDirectory.CreationInfo", *ci.OwnerUid, *ci.OwnerGid); e != nil {
				return ap, e
			}
			if !permissionsPattern.MatchString(*ci.Permissions) {
				return ap, errBadRequest("RootDirectory.CreationInfo.Permissions %q is not valid: want 3 or 4 "+
					"octal digits like 0755", truncate(*ci.Permissions, 20))
			}
			ap.RootDirectory.CreationInfo = &CreationInfo{
				OwnerUid: *ci.OwnerUid, OwnerGid: *ci.OwnerGid, Permissions: *ci.Permissions,
			}
		}
	}
	if e := validateTags("Tags", req.Tags); e != nil {
		return ap, e
	}
	ap.Tags = append([]Tag(nil), req.Tags...)
	return ap, nil
}

func checkPOSIXIDs(field string, uid, gid int64) *apiError {
	if uid < 0 || uid > maxPOSIXID || gid < 0 || gid > maxPOSIXID {
		return errBadRequest("%s uid %d / gid %d is not valid: want 0 to %d", field, uid, gid, int64(maxPOSIXID))
	}
	return nil
}

// insertAccessPoint stores an access point of rec, giving it an ID and ARN when it has none. Callers hold st.mu.
func (st *state) insertAccessPoint(rec *fsRecord, ap AccessPoint, readyAt time.Time) *apRecord {
	if ap.AccessPointId == "" {
		ap.AccessPointId = newID(st.srv, "fsap-", st.aps)
	}
	ap.AccessPointArn = st.srv.arn("access-point/" + ap.AccessPointId)
	ap.OwnerId = st.srv.opts.AccountID
	ap.Name = nameTag(ap.Tags)
	st.seq++
	ar := &apRecord{seq: st.seq, ap: ap, readyAt: readyAt}
	st.aps[ap.AccessPointId] = ar
	st.apByToken[ap.ClientToken] = ar
	rec.aps = append(rec.aps, ar)
	return ar
}

// accessPointListing is DescribeAccessPoints' paging: MaxResults (default 100, at most 1000) and NextToken.
var accessPointListing = listing{sizeField: "MaxResults", def: 100, limit: 1000, tokenField: "NextToken"}

// describeAccessPoints: GET /2015-02-01/access-points with AccessPointId or FileSystemId (not both; neither
// lists every access point of the account), MaxResults (default 100, at most 1000) and NextToken.
func (s *Server) describeAccessPoints(r *http.Request) (int, any, *apiError) {
	q := r.URL.Query()
	apRaw, fsRaw := q.Get("AccessPointId"), q.Get("FileSystemId")
	if apRaw != "" && fsRaw != "" {
		return 0, nil, errBadRequest("AccessPointId and FileSystemId are mutually exclusive: pass one of them")
	}
	size, e := accessPointListing.size(q)
	if e != nil {
		return 0, nil, e
	}
	now := time.Now()
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	var list []*apRecord
	scope := "*"
	switch {
	case apRaw != "":
		id, e := accessPointID("AccessPointId", apRaw)
		if e != nil {
			return 0, nil, e
		}
		a := st.aps[id]
		if a == nil {
			return 0, nil, errAccessPointNotFound(id)
		}
		list, scope = []*apRecord{a}, id
	case fsRaw != "":
		id, e := fileSystemID("FileSystemId", fsRaw)
		if e != nil {
			return 0, nil, e
		}
		rec := st.fs[id]
		if rec == nil {
			return 0, nil, errFileSystemNotFound(id)
		}
		list, scope = rec.aps, id
	default:
		for _, rec := range st.fsOrder {
			list = append(list, rec.aps...)
		}
		sortBySeq(list)
	}
	page, next, e := takePage(q, accessPointListing, size, scope, list)
	if e != nil {
		return 0, nil, e
	}
	out := struct {
		AccessPoints []wireAccessPoint
		NextToken    string `json:",omitempty"`
	}{AccessPoints: make([]wireAccessPoint, 0, len(page)), NextToken: next}
	for _, a := range page {
		out.AccessPoints = append(out.AccessPoints, a.view(now).wire())
	}
	return http.StatusOK, out, nil
}

// deleteAccessPoint: DELETE /2015-02-01/access-points/{AccessPointId}. The client token becomes free again.
func (s *Server) deleteAccessPoint(r *http.Request) (int, any, *apiError) {
	id, e := accessPointID("AccessPointId", r.PathValue("AccessPointId"))
	if e != nil {
		return 0, nil, e
	}
	if !s.state.deleteAccessPoint(id) {
		return 0, nil, errAccessPointNotFound(id)
	}
	return http.StatusNoContent, nil, nil
}

func (st *state) deleteAccessPoint(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	a := st.aps[id]
	if a == nil {
		return false
	}
	delete(st.aps, id)
	if st.apByToken[a.ap.ClientToken] == a {
		delete(st.apByToken, a.ap.ClientToken)
	}
	if rec := st.fs[a.ap.FileSystemId]; rec != nil {
		rec.aps = removeBySeq(rec.aps, a.seq, func(x *apRecord) uint64 { return x.seq })
	}
	return true
}

// AddAccessPoint stores an available access point directly, bypassing the API and its quota (as if another
// client made it behind the driver's back), and returns its ID. Empty AccessPointId and ClientToken get fresh
// values. It panics when the file system does not exist, the ID or client token is taken, or the API would
// reject the root directory or tags: those are bugs in the test.
func (s *Server) AddAccessPoint(ap AccessPoint) string {
	ap = ap.clone()
	if ap.RootDirectory.Path != "" {
		if e := validateRootPath(ap.RootDirectory.Path); e != nil {
			panic("fakeaws: AddAccessPoint: " + e.Message)
		}
	}
	if e := validateTags("Tags", ap.Tags); e != nil {
		panic("fakeaws: AddAccessPoint: " + e.Message)
	}
	if ap.AccessPointId != "" && !accessPointIDPattern.MatchString(ap.AccessPointId) {
		panic(fmt.Sprintf("fakeaws: AddAccessPoint: AccessPointId %q: want fsap-[0-9a-f]{8,40}", ap.AccessPointId))
	}
	if ap.LifeCycleState == "" {
		ap.LifeCycleState = "available"
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := st.fs[ap.FileSystemId]
	if rec == nil {
		panic(fmt.Sprintf("fakeaws: AddAccessPoint: file system %q does not exist", ap.FileSystemId))
	}
	if st.aps[ap.AccessPointId] != nil {
		panic(fmt.Sprintf("fakeaws: AddAccessPoint: AccessPointId %q already exists", ap.AccessPointId))
	}
	if ap.ClientToken == "" {
		ap.ClientToken = "fakeaws-" + s.randHex(24)
	}
	if st.apByToken[ap.ClientToken] != nil {
		panic(fmt.Sprintf("fakeaws: AddAccessPoint: ClientToken %q already used", ap.ClientToken))
	}
	return st.insertAccessPoint(rec, ap, time.Time{}).ap.AccessPointId
}

// DeleteAccessPointDirect deletes an access point bypassing the API (as if deleted behind the driver's back).
// Deleting an unknown ID does nothing.
func (s *Server) DeleteAccessPointDirect(id string) {
	s.state.deleteAccessPoint(id)
}

// AccessPoints returns the access points of a file system in creation order (deep copies).
func (s *Server) AccessPoints(fsID string) []AccessPoint {
	return viewsOf(s, fsID, func(rec *fsRecord) []*apRecord { return rec.aps }, (*apRecord).view)
}

// AccessPoint returns one access point by ID.
func (s *Server) AccessPoint(id string) (AccessPoint, bool) {
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	a := st.aps[id]
	if a == nil {
		return AccessPoint{}, false
	}
	return a.view(time.Now()), true
}

func sortBySeq(list []*apRecord) {
	slices.SortFunc(list, func(a, b *apRecord) int { return cmp.Compare(a.seq, b.seq) })
}
