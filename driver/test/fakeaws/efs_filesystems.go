package fakeaws

import (
	"fmt"
	"net/http"
	"time"
)

type createFileSystemRequest struct {
	CreationToken                *string
	PerformanceMode              string
	Encrypted                    bool
	KmsKeyId                     string
	ThroughputMode               string
	ProvisionedThroughputInMibps float64
	AvailabilityZoneName         string
	Backup                       bool
	Tags                         []Tag
}

// createFileSystem: POST /2015-02-01/file-systems. The creation token makes it idempotent as EFS documents it:
// a token already used fails with FileSystemAlreadyExists carrying the existing FileSystemId.
func (s *Server) createFileSystem(r *http.Request) (int, any, *apiError) {
	var req createFileSystemRequest
	if e := decodeJSONBody(r, &req); e != nil {
		return 0, nil, e
	}
	if req.CreationToken == nil || len(*req.CreationToken) < 1 || len(*req.CreationToken) > 64 {
		return 0, nil, errBadRequest("CreationToken is required: want 1 to 64 characters")
	}
	fs := FileSystem{
		CreationToken: *req.CreationToken, PerformanceMode: req.PerformanceMode, ThroughputMode: req.ThroughputMode,
		ProvisionedThroughputInMibps: req.ProvisionedThroughputInMibps, Encrypted: req.Encrypted,
		KmsKeyId: req.KmsKeyId, AvailabilityZoneName: req.AvailabilityZoneName, Tags: req.Tags,
		LifeCycleState: "creating",
	}
	if e := s.completeFileSystem(&fs); e != nil {
		return 0, nil, e
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if old := st.fsByToken[fs.CreationToken]; old != nil {
		e := newError(http.StatusConflict, "FileSystemAlreadyExists",
			"File system '%s' already exists with creation token '%s'", old.fs.FileSystemId, fs.CreationToken)
		e.Extra = map[string]string{"FileSystemId": old.fs.FileSystemId}
		return 0, nil, e
	}
	rec := st.insertFileSystem(fs, time.Now().Add(s.opts.FileSystemCreateDelay))
	out := rec.fs
	out.Tags = append([]Tag(nil), out.Tags...)
	return http.StatusCreated, out.wire(), nil
}

// completeFileSystem validates a file system description and fills in defaults and derived fields.
func (s *Server) completeFileSystem(fs *FileSystem) *apiError {
	switch fs.PerformanceMode {
	case "":
		fs.PerformanceMode = "generalPurpose"
	case "generalPurpose", "maxIO":
	default:
		return errBadRequest("PerformanceMode %q is not valid: want generalPurpose or maxIO", fs.PerformanceMode)
	}
	switch fs.ThroughputMode {
	case "":
		fs.ThroughputMode = "bursting"
	case "bursting", "elastic":
	case "provisioned":
		if fs.ProvisionedThroughputInMibps < 1 {
			return errBadRequest("ProvisionedThroughputInMibps %v is not valid: want >= 1 with ThroughputMode "+
				"provisioned", fs.ProvisionedThroughputInMibps)
		}
	default:
		return errBadRequest("ThroughputMode %q is not valid: want bursting, provisioned or elastic",
			fs.ThroughputMode)
	}
	if e := validateTags("Tags", fs.Tags); e != nil {
		return e
	}
	if fs.AvailabilityZoneName != "" || fs.AvailabilityZoneId != "" {
		z, ok := s.oneZone(fs.AvailabilityZoneName, fs.AvailabilityZoneId)
		if !ok {
			return newError(http.StatusBadRequest, "UnsupportedAvailabilityZone",
				"AvailabilityZoneName %q is not valid: want one of the region's zones %v",
				fs.AvailabilityZoneName+fs.AvailabilityZoneId, s.zoneNames())
		}
		if fs.PerformanceMode == "maxIO" {
			return errBadRequest("PerformanceMode maxIO is not supported for One Zone file systems")
		}
		fs.AvailabilityZoneName, fs.AvailabilityZoneId = z.Name, z.ID
	}
	if fs.KmsKeyId != "" {
		fs.Encrypted = true
	}
	if fs.Encrypted && fs.KmsKeyId == "" {
		fs.KmsKeyId = fmt.Sprintf("arn:aws:kms:%s:%s:key/7b5e2d6c-1f7a-4e0b-9c3d-2a1b0c9d8e7f",
			s.opts.Region, s.opts.AccountID)
	}
	fs.Name = nameTag(fs.Tags)
	fs.OwnerId = s.opts.AccountID
	if fs.SizeInBytes == 0 {
		fs.SizeInBytes = 6144
	}
	if fs.CreationTime.IsZero() {
		fs.CreationTime = time.Now().UTC().Truncate(time.Second)
	}
	return nil
}

// oneZone finds the zone of a One Zone file system by name or ID.
func (s *Server) oneZone(name, id string) (Zone, bool) {
	if name != "" {
		z, _, ok := s.zoneByName(name)
		return z, ok && (id == "" || id == z.ID)
	}
	z, _, ok := s.zoneByID(id)
	return z, ok
}

func (s *Server) zoneNames() []string {
	out := make([]string, len(s.opts.Zones))
	for i, z := range s.opts.Zones {
		out[i] = z.Name
	}
	return out
}

// insertFileSystem stores a completed file system, giving it an ID and ARN when it has none. Callers hold st.mu.
func (st *state) insertFileSystem(fs FileSystem, readyAt time.Time) *fsRecord {
	if fs.FileSystemId == "" {
		fs.FileSystemId = newID(st.srv, "fs-", st.fs)
	}
	fs.FileSystemArn = st.srv.arn("file-system/" + fs.FileSystemId)
	st.seq++
	rec := &fsRecord{seq: st.seq, fs: fs, readyAt: readyAt}
	st.fs[fs.FileSystemId] = rec
	st.fsOrder = append(st.fsOrder, rec)
	if fs.CreationToken != "" {
		st.fsByToken[fs.CreationToken] = rec
	}
	return rec
}

// fileSystemListing is DescribeFileSystems' paging: MaxItems (default and limit 100) and Marker.
var fileSystemListing = listing{sizeField: "MaxItems", def: 100, limit: 100, tokenField: "Marker"}

// describeFileSystems: GET /2015-02-01/file-systems[?FileSystemId=|CreationToken=][&MaxItems=&Marker=].
func (s *Server) describeFileSystems(r *http.Request) (int, any, *apiError) {
	q := r.URL.Query()
	size, e := fileSystemListing.size(q)
	if e != nil {
		return 0, nil, e
	}
	if _, e := decodePageToken(fileSystemListing.tokenField, q.Get(fileSystemListing.tokenField), "*"); e != nil {
		return 0, nil, e // a bad Marker is refused before the file system is looked up
	}
	var wantID string
	if raw := q.Get("FileSystemId"); raw != "" {
		if wantID, e = fileSystemID("FileSystemId", raw); e != nil {
			return 0, nil, e
		}
	}
	token := q.Get("CreationToken")
	now := time.Now()
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	list := st.fsOrder
	if wantID != "" {
		rec := st.fs[wantID]
		if rec == nil {
			return 0, nil, errFileSystemNotFound(wantID)
		}
		list = []*fsRecord{rec}
	}
	if token != "" {
		var filtered []*fsRecord
		for _, rec := range list {
			if rec.fs.CreationToken == token {
				filtered = append(filtered, rec)
			}
		}
		list = filtered
	}
	page, next, e := takePage(q, fileSystemListing, size, "*", list)
	if e != nil {
		return 0, nil, e
	}
	out := struct {
		FileSystems []wireFileSystem
		Marker      string `json:",omitempty"`
		NextMarker  string `json:",omitempty"`
	}{FileSystems: make([]wireFileSystem, 0, len(page)), Marker: q.Get("Marker"), NextMarker: next}
	for _, rec := range page {
		out.FileSystems = append(out.FileSystems, rec.view(now).wire())
	}
	return http.StatusOK, out, nil
}

// deleteFileSystem: DELETE /2015-02-01/file-systems/{FileSystemId}. A file system with mount targets is in use.
func (s *Server) deleteFileSystem(r *http.Request) (int, any, *apiError) {
	id, e := fileSystemID("FileSystemId", r.PathValue("FileSystemId"))
	if e != nil {
		return 0, nil, e
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := st.fs[id]
	if rec == nil {
		return 0, nil, errFileSystemNotFound(id)
	}
	if len(rec.mts) > 0 {
		return 0, nil, newError(http.StatusConflict, "FileSystemInUse",
			"File system '%s' has %d mount targets; delete them first", id, len(rec.mts))
	}
	for _, ap := range rec.aps {
		delete(st.aps, ap.ap.AccessPointId)
		delete(st.apByToken, ap.ap.ClientToken)
	}
	delete(st.fs, id)
	delete(st.fsByToken, rec.fs.CreationToken)
	st.fsOrder = removeBySeq(st.fsOrder, rec.seq, func(f *fsRecord) uint64 { return f.seq })
	return http.StatusNoContent, nil, nil
}

// AddFileSystem stores a file system directly, bypassing the API (as if made behind the client's back), and
// returns its ID. Empty fields get defaults (a fresh ID, LifeCycleState "available", generalPurpose, bursting);
// AvailabilityZoneName (or AvailabilityZoneId) makes it a One Zone file system. It panics on a description the
// API would reject (unknown zone, bad tags) or a duplicate ID or creation token: those are bugs in the test.
func (s *Server) AddFileSystem(fs FileSystem) string {
	if fs.LifeCycleState == "" {
		fs.LifeCycleState = "available"
	}
	fs.Tags = append([]Tag(nil), fs.Tags...)
	if e := s.completeFileSystem(&fs); e != nil {
		panic("fakeaws: AddFileSystem: " + e.Message)
	}
	if fs.FileSystemId != "" && !fileSystemIDPattern.MatchString(fs.FileSystemId) {
		panic(fmt.Sprintf("fakeaws: AddFileSystem: FileSystemId %q: want fs-[0-9a-f]{8,40}", fs.FileSystemId))
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.fs[fs.FileSystemId] != nil {
		panic(fmt.Sprintf("fakeaws: AddFileSystem: FileSystemId %q already exists", fs.FileSystemId))
	}
	if fs.CreationToken == "" {
		fs.CreationToken = "fakeaws-" + s.randHex(12)
	}
	if st.fsByToken[fs.CreationToken] != nil {
		panic(fmt.Sprintf("fakeaws: AddFileSystem: CreationToken %q already used", fs.CreationToken))
	}
	// A seeded "creating" file system turns available after FileSystemCreateDelay, like a created one.
	return st.insertFileSystem(fs, time.Now().Add(s.opts.FileSystemCreateDelay)).fs.FileSystemId
}

// FileSystems returns every file system, in creation order.
func (s *Server) FileSystems() []FileSystem {
	now := time.Now()
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := make([]FileSystem, 0, len(st.fsOrder))
	for _, rec := range st.fsOrder {
		out = append(out, rec.view(now))
	}
	return out
}
