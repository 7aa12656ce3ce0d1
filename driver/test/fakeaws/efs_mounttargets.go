package fakeaws

import (
	"fmt"
	"net/http"
	"time"
)

type createMountTargetRequest struct {
	FileSystemId   string
	SubnetId       string
	IpAddress      string
	SecurityGroups []string
}

// createMountTarget: POST /2015-02-01/mount-targets. One mount target per zone per file system; a One Zone file
// system takes one, in its own zone.
func (s *Server) createMountTarget(r *http.Request) (int, any, *apiError) {
	var req createMountTargetRequest
	if e := decodeJSONBody(r, &req); e != nil {
		return 0, nil, e
	}
	fsID, e := fileSystemID("FileSystemId", req.FileSystemId)
	if e != nil {
		return 0, nil, e
	}
	if !subnetIDPattern.MatchString(req.SubnetId) {
		return 0, nil, errBadRequest("SubnetId %q is not valid: want subnet-[0-9a-f]{8,40}", req.SubnetId)
	}
	if req.IpAddress != "" && !ipv4Pattern.MatchString(req.IpAddress) {
		return 0, nil, errBadRequest("IpAddress %q is not valid: want a dotted IPv4 address", req.IpAddress)
	}
	zi := -1
	for i := range s.opts.Zones {
		if s.subnet(i).SubnetId == req.SubnetId {
			zi = i
		}
	}
	if zi < 0 {
		return 0, nil, newError(http.StatusBadRequest, "SubnetNotFound", "The subnet ID '%s' does not exist",
			req.SubnetId)
	}
	now := time.Now()
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := st.fs[fsID]
	if rec == nil {
		return 0, nil, errFileSystemNotFound(fsID)
	}
	if state := lifeCycle(rec.fs.LifeCycleState, rec.readyAt, now); state != "available" {
		return 0, nil, errIncorrectFileSystemLifeCycleState(fsID, state)
	}
	mt, e := st.insertMountTarget(rec, zi, req.IpAddress, now.Add(s.opts.MountTargetCreateDelay))
	if e != nil {
		return 0, nil, e
	}
	mt.LifeCycleState = "creating"
	return http.StatusOK, mt, nil
}

// insertMountTarget adds a mount target of rec in zone zi, at ip or a free address. Callers hold st.mu.
func (st *state) insertMountTarget(rec *fsRecord, zi int, ip string, readyAt time.Time) (MountTarget, *apiError) {
	sub := st.srv.subnet(zi)
	if rec.fs.AvailabilityZoneName != "" {
		if rec.fs.AvailabilityZoneName != sub.AvailabilityZoneName {
			return MountTarget{}, newError(http.StatusBadRequest, "AvailabilityZonesMismatch",
				"One Zone file system '%s' is in %s; subnet '%s' is in %s", rec.fs.FileSystemId,
				rec.fs.AvailabilityZoneName, sub.SubnetId, sub.AvailabilityZoneName)
		}
	}
	for _, m := range rec.mts {
		if m.mt.AvailabilityZoneName == sub.AvailabilityZoneName {
			return MountTarget{}, newError(http.StatusConflict, "MountTargetConflict",
				"File system '%s' already has mount target '%s' in %s", rec.fs.FileSystemId, m.mt.MountTargetId,
				sub.AvailabilityZoneName)
		}
	}
	if ip == "" {
		var ok bool
		if ip, ok = st.allocIP(zi); !ok {
			return MountTarget{}, newError(http.StatusConflict, "NoFreeAddressesInSubnet",
				"Subnet '%s' has no free addresses", sub.SubnetId)
		}
	} else if st.usedIPs[ip] {
		return MountTarget{}, newError(http.StatusConflict, "IpAddressInUse", "IP address %s is in use", ip)
	}
	st.usedIPs[ip] = true
	mt := MountTarget{
		MountTargetId: newID(st.srv, "fsmt-", st.mts), FileSystemId: rec.fs.FileSystemId,
		OwnerId: st.srv.opts.AccountID, SubnetId: sub.SubnetId, VpcId: sub.VpcId, IpAddress: ip,
		NetworkInterfaceId:   "eni-" + st.srv.randHex(17),
		AvailabilityZoneName: sub.AvailabilityZoneName, AvailabilityZoneId: sub.AvailabilityZoneId,
		LifeCycleState: "creating",
	}
	st.seq++
	mr := &mtRecord{seq: st.seq, mt: mt, readyAt: readyAt}
	st.mts[mt.MountTargetId] = mr
	rec.mts = append(rec.mts, mr)
	return mt, nil
}

// mountTargetListing is DescribeMountTargets' paging: MaxItems (default 10, at most 100) and Marker.
var mountTargetListing = listing{sizeField: "MaxItems", def: 10, limit: 100, tokenField: "Marker"}

// describeMountTargets: GET /2015-02-01/mount-targets with exactly one of FileSystemId, MountTargetId and
// AccessPointId, plus MaxItems (default 10, at most 100) and Marker.
func (s *Server) describeMountTargets(r *http.Request) (int, any, *apiError) {
	q := r.URL.Query()
	fsRaw, mtRaw, apRaw := q.Get("FileSystemId"), q.Get("MountTargetId"), q.Get("AccessPointId")
	n := 0
	for _, v := range []string{fsRaw, mtRaw, apRaw} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return 0, nil, errBadRequest("exactly one of FileSystemId, MountTargetId and AccessPointId is required; got %d", n)
	}
	size, e := mountTargetListing.size(q)
	if e != nil {
		return 0, nil, e
	}
	now := time.Now()
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	var list []*mtRecord
	scope := ""
	switch {
	case mtRaw != "":
		if !mountTargetIDPattern.MatchString(mtRaw) {
			return 0, nil, errBadRequest("MountTargetId %q is not valid: want fsmt-[0-9a-f]{8,40}", mtRaw)
		}
		m := st.mts[mtRaw]
		if m == nil {
			return 0, nil, errMountTargetNotFound(mtRaw)
		}
		list, scope = []*mtRecord{m}, mtRaw
	case apRaw != "":
		id, e := accessPointID("AccessPointId", apRaw)
		if e != nil {
			return 0, nil, e
		}
		ap := st.aps[id]
		if ap == nil {
			return 0, nil, errAccessPointNotFound(id)
		}
		list, scope = st.fs[ap.ap.FileSystemId].mts, id
	default:
		id, e := fileSystemID("FileSystemId", fsRaw)
		if e != nil {
			return 0, nil, e
		}
		rec := st.fs[id]
		if rec == nil {
			return 0, nil, errFileSystemNotFound(id)
		}
		list, scope = rec.mts, id
	}
	page, next, e := takePage(q, mountTargetListing, size, scope, list)
	if e != nil {
		return 0, nil, e
	}
	out := struct {
		MountTargets []MountTarget
		Marker       string `json:",omitempty"`
		NextMarker   string `json:",omitempty"`
	}{MountTargets: make([]MountTarget, 0, len(page)), Marker: q.Get("Marker"), NextMarker: next}
	for _, m := range page {
		out.MountTargets = append(out.MountTargets, m.view(now))
	}
	return http.StatusOK, out, nil
}

// deleteMountTarget: DELETE /2015-02-01/mount-targets/{MountTargetId}.
func (s *Server) deleteMountTarget(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("MountTargetId")
	if !mountTargetIDPattern.MatchString(id) {
		return 0, nil, errBadRequest("MountTargetId %q is not valid: want fsmt-[0-9a-f]{8,40}", id)
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	m := st.mts[id]
	if m == nil {
		return 0, nil, errMountTargetNotFound(id)
	}
	delete(st.mts, id)
	delete(st.usedIPs, m.mt.IpAddress)
	if rec := st.fs[m.mt.FileSystemId]; rec != nil {
		rec.mts = removeBySeq(rec.mts, m.seq, func(x *mtRecord) uint64 { return x.seq })
	}
	return http.StatusNoContent, nil, nil
}

// AddMountTarget stores an available mount target of file system fsID in zone zoneName directly, bypassing the
// API, at ip (empty: a free address of the zone's subnet), and returns its ID. It panics when the file system or
// zone does not exist or the API would refuse the mount target (second one in a zone, wrong zone for One Zone).
func (s *Server) AddMountTarget(fsID, zoneName, ip string) string {
	_, zi, ok := s.zoneByName(zoneName)
	if !ok {
		panic(fmt.Sprintf("fakeaws: AddMountTarget: zone %q: want one of %v", zoneName, s.zoneNames()))
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := st.fs[fsID]
	if rec == nil {
		panic(fmt.Sprintf("fakeaws: AddMountTarget: file system %q does not exist", fsID))
	}
	mt, e := st.insertMountTarget(rec, zi, ip, time.Time{})
	if e != nil {
		panic("fakeaws: AddMountTarget: " + e.Message)
	}
	return mt.MountTargetId
}

// MountTargets returns the mount targets of a file system, in creation order.
func (s *Server) MountTargets(fsID string) []MountTarget {
	return viewsOf(s, fsID, func(rec *fsRecord) []*mtRecord { return rec.mts }, (*mtRecord).view)
}

// viewsOf returns the views (deep copies, as of now) of the records pick selects from file system fsID, in creation
// order; nil for an unknown file system.
func viewsOf[R, V any](s *Server, fsID string, pick func(*fsRecord) []R, view func(R, time.Time) V) []V {
	now := time.Now()
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	rec := st.fs[fsID]
	if rec == nil {
		return nil
	}
	records := pick(rec)
	out := make([]V, 0, len(records))
	for _, r := range records {
		out = append(out, view(r, now))
	}
	return out
}
