package nfsbackend

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// AccessPoints looks up an access point by ID; ok is false when it does not exist (or is not available).
type AccessPoints func(id string) (ap AccessPoint, ok bool)

// Server serves file systems from BackingDir/<file system ID>.
type Server struct {
	// BackingDir holds one directory per file system, its root.
	BackingDir string
	// AccessPoints looks up the access point a client certificate names.
	AccessPoints AccessPoints
	// SyncInterval is how often the NFS mount tables are brought up to date; default 500ms.
	SyncInterval time.Duration
	// NFSServer, when set, is the address of a real NFS server exporting BackingDir at its NFSv4 pseudo root
	// (package realnfs): a connection that starts with an ONC RPC record mark instead of a JSON request is relayed
	// to it, and answers carry the served directory's path there. Without it such connections are closed.
	NFSServer string

	tables *tables

	mu        sync.Mutex
	listeners []net.Listener
	mounts    []mountRecord
	counts    map[string]int
	relayed   map[string]int
	stop      chan struct{}
	wg        sync.WaitGroup
}

// mountRecord is a mount the backend made, to be taken off at Close if it is still there.
type mountRecord struct {
	pid    int
	nsIno  uint64
	target string
	// dev and ino identify the served directory: a mount point showing it is this mount (or a propagated copy).
	dev, ino uint64
}

// Start prepares the server and starts keeping the mount tables current until Close.
func (s *Server) Start() error {
	if s.BackingDir == "" || s.AccessPoints == nil {
		return errors.New("nfsbackend: BackingDir and AccessPoints are required")
	}
	if s.SyncInterval <= 0 {
		s.SyncInterval = 500 * time.Millisecond
	}
	stop := make(chan struct{})
	s.tables, s.stop, s.counts, s.relayed = newTables(), stop, map[string]int{}, map[string]int{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.SyncInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				s.tables.sync()
			}
		}
	}()
	return nil
}

// Listen serves file system fsID (creating its backing directory, mode 0755 as a new EFS root) on a free
// loopback port and returns the address: the connect address of its mount targets' stunnel service.
func (s *Server) Listen(fsID string) (string, error) {
	if err := os.MkdirAll(filepath.Join(s.BackingDir, fsID), 0o755); err != nil {
		return "", fmt.Errorf("nfsbackend: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("nfsbackend: listen for %s: %w", fsID, err)
	}
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c, fsID) }()
		}
	}()
	return l.Addr().String(), nil
}

// Mounts returns how many mounts each file system served so far.
func (s *Server) Mounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// NFSConnections returns how many client connections of each file system were relayed to NFSServer so far.
func (s *Server) NFSConnections() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.relayed))
	for k, v := range s.relayed {
		out[k] = v
	}
	return out
}

func (s *Server) serve(c net.Conn, fsID string) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	if first, err := r.Peek(1); err == nil && isRecordMark(first[0]) {
		s.relayNFS(c, r, fsID)
		return
	}
	var req Request
	if err := ReadMessage(r, &req); err != nil {
		if errors.Is(err, io.EOF) {
			// efs-utils checks that its relay listens by connecting and closing; stunnel passes that on
			klog.V(4).InfoS("Connection closed without a request", "fileSystemID", fsID)
			return
		}
		klog.InfoS("Bad request from a mount.nfs4 stand-in", "fileSystemID", fsID, "err", err)
		_ = WriteMessage(c, Response{Error: "bad request: " + err.Error()})
		return
	}
	served, err := s.answer(fsID, req)
	resp := Response{Served: served}
	if err == nil && s.NFSServer != "" {
		resp.NFSPath = path.Join("/", fsID, served)
	}
	switch {
	case err != nil:
		resp.Error = err.Error()
		klog.InfoS("Mount refused", "fileSystemID", fsID, "target", req.Target, "export", req.Export, "resolveOnly", req.Resolve, "err", err)
	case req.Resolve:
		klog.V(2).InfoS("Resolved", "fileSystemID", fsID, "served", served, "target", req.Target)
	default:
		klog.V(2).InfoS("Mounted", "fileSystemID", fsID, "served", served, "target", req.Target, "mountNamespace", req.MountNamespace)
	}
	_ = WriteMessage(c, resp)
}

// nfsRelayTimeout bounds one relayed NFS connection.
const nfsRelayTimeout = 2 * time.Minute

// isRecordMark says whether b can start an ONC RPC record over TCP (RFC 5531 §11): the high bit marks the last
// fragment, and NFS clients send each call as one fragment. A JSON request starts with '{'.
func isRecordMark(b byte) bool { return b&0x80 != 0 }

// relayNFS carries a client's NFS connection to NFSServer, both ways, until either side closes it.
func (s *Server) relayNFS(c net.Conn, r *bufio.Reader, fsID string) {
	if s.NFSServer == "" {
		klog.InfoS("NFS connection closed: no NFS server behind this stand-in", "fileSystemID", fsID)
		return
	}
	up, err := net.DialTimeout("tcp", s.NFSServer, 10*time.Second)
	if err != nil {
		klog.InfoS("NFS server unreachable", "fileSystemID", fsID, "server", s.NFSServer, "err", err)
		return
	}
	defer up.Close()
	// The clients are short NFS sessions (a listing before a mount); the deadline keeps Close from waiting on a
	// stalled one for longer.
	deadline := time.Now().Add(nfsRelayTimeout)
	_ = c.SetDeadline(deadline)
	_ = up.SetDeadline(deadline)
	klog.V(2).InfoS("Relaying an NFS connection", "fileSystemID", fsID, "server", s.NFSServer)
	s.mu.Lock()
	s.relayed[fsID]++
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, r)
		_ = up.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	_ = c.Close()
	<-done
}

// answer serves one request of a client of file system fsID: it works out the directory to serve and, unless
// the request only asks to resolve it, mounts it.
func (s *Server) answer(fsID string, req Request) (string, error) {
	if err := req.Validate(); err != nil {
		return "", err
	}
	var ap *AccessPoint
	if req.Certificate != "" {
		id, err := ParseClientCertificate([]byte(req.Certificate))
		if err != nil {
			return "", err
		}
		if id.FileSystemID != fsID {
			return "", fmt.Errorf("access denied: the client certificate is for %s, this mount target serves %s", id.FileSystemID, fsID)
		}
		if id.AccessPointID != "" {
			got, ok := s.AccessPoints(id.AccessPointID)
			if !ok || got.FileSystemID != fsID {
				return "", fmt.Errorf("access denied: access point %s does not exist on %s", id.AccessPointID, fsID)
			}
			ap = &got
		}
	}
	dir, served, err := openExport(filepath.Join(s.BackingDir, fsID), ap, req.Export)
	if err != nil {
		return served, err
	}
	defer dir.Close()
	if req.Resolve {
		return served, nil
	}
	var dst unix.Stat_t
	if err := unix.Fstat(int(dir.Fd()), &dst); err != nil {
		return served, err
	}
	pid, err := findNamespaceMember(req.MountNamespace, 0)
	if err != nil {
		return served, err
	}
	if err := bindInNamespace(dir, pid, req.MountNamespace, req.Target); err != nil {
		return served, err
	}
	s.mu.Lock()
	s.mounts = append(s.mounts, mountRecord{pid: pid, nsIno: req.MountNamespace, target: req.Target, dev: dst.Dev, ino: dst.Ino})
	s.counts[fsID]++
	s.mu.Unlock()
	if req.MountTable != "" {
		e := Entry{Source: req.Source, Target: req.Target, Options: req.Options}
		if err := s.tables.add(pid, req.MountNamespace, req.MountTable, e); err != nil {
			_ = unmountInNamespace(pid, req.MountNamespace, req.Target)
			return served, err
		}
	}
	return served, nil
}

// Close stops serving, takes off the mounts it made that are still mounted (lazily, in their namespaces, or on
// the host when the namespace is gone but a propagated copy is left there) and writes the mount tables one last
// time.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	ls, mounts, stop := s.listeners, s.mounts, s.stop
	s.listeners, s.mounts, s.stop = nil, nil, nil
	s.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	if stop != nil {
		close(stop)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		if err := mounts[i].takeOff(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.tables != nil {
		s.tables.sync()
	}
	return errors.Join(errs...)
}

// takeOff unmounts the mount m made, where it is still mounted: in its namespace while a process is left there,
// else in this process's namespace (a copy propagated through a shared mount, e.g. the kubelet directory after
// the node container ended). Only a mount point that shows the served directory is unmounted, so nothing mounted
// there since is touched.
func (m mountRecord) takeOff() error {
	pid, err := findNamespaceMember(m.nsIno, m.pid)
	if err != nil {
		self, serr := nsInode("self")
		if serr != nil {
			return serr
		}
		pid, m.nsIno = os.Getpid(), self
	}
	info, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil || !MountPoints(string(info))[m.target] {
		return nil
	}
	st, err := statInRoot(pid, m.target)
	if err != nil || st.Dev != m.dev || st.Ino != m.ino {
		return nil
	}
	return unmountInNamespace(pid, m.nsIno, m.target)
}
