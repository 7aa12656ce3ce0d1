package realnfs

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DaemonPath is Debian's nfs-ganesha daemon.
const DaemonPath = "/usr/bin/ganesha.nfsd"

// vfsModule is the FSAL the export uses (package nfs-ganesha-vfs); nfs-ganesha loads it by name at start.
const vfsModule = "/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so"

// startTimeout bounds the wait for the server to take connections.
const startTimeout = 30 * time.Second

// Server is a running nfs-ganesha.
type Server struct {
	// Addr is where it serves NFSv4 (127.0.0.1:PORT).
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// Installed says whether nfs-ganesha and its VFS module are installed, and if not, what is missing.
func Installed() error {
	for _, p := range []struct{ path, pkg string }{{DaemonPath, "nfs-ganesha"}, {vfsModule, "nfs-ganesha-vfs"}} {
		if _, err := os.Stat(p.path); err != nil {
			return fmt.Errorf("realnfs: %s is missing: install Debian's %s (apt-get install nfs-ganesha nfs-ganesha-vfs)", p.path, p.pkg)
		}
	}
	return nil
}

// StartServer exports exportDir at the NFSv4 pseudo root "/" (a client reaches exportDir/a/b as /a/b) and returns once
// the server takes connections; dir holds ganesha.conf, ganesha.log, the pid file and the recovery directory.
// The server runs in its own process group; Stop ends it.
func StartServer(dir, exportDir string) (*Server, error) {
	if err := Installed(); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	recovery := filepath.Join(dir, "ganesha-recovery")
	if err := os.MkdirAll(recovery, 0o700); err != nil {
		return nil, fmt.Errorf("realnfs: %w", err)
	}
	conf := filepath.Join(dir, "ganesha.conf")
	if err := os.WriteFile(conf, []byte(config(exportDir, recovery, port)), 0o600); err != nil {
		return nil, fmt.Errorf("realnfs: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), done: make(chan struct{}),
		log: filepath.Join(dir, "ganesha.log")}
	// -F: foreground; -N NIV_EVENT: start-up and connection events, not every operation.
	s.cmd = exec.Command(DaemonPath, "-F", "-f", conf, "-L", s.log, "-p", filepath.Join(dir, "ganesha.pid"), "-N", "NIV_EVENT")
	// no Pdeathsig: it fires when the starting OS thread ends, and Go ends locked threads (package nfsbackend
	// locks threads to enter mount namespaces)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("realnfs: start %s: %w", DaemonPath, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("realnfs: %s exited before serving on %s: %s", DaemonPath, s.Addr, s.Log())
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("realnfs: not serving on %s after %s: %v\n%s", s.Addr, startTimeout, err, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// config is the server's configuration: one read-only NFSv4 export of exportDir at "/", no grace period (there
// are no clients to recover), numeric owners (no idmapd here), and every protocol but NFSv4 over TCP off.
func config(exportDir, recovery string, port int) string {
	return fmt.Sprintf(`NFS_CORE_PARAM {
	Protocols = 4;
	NFS_Port = %d;
	Bind_addr = 127.0.0.1;
	Enable_NLM = false;
	Enable_RQUOTA = false;
	Enable_UDP = false;
}
NFSV4 {
	RecoveryBackend = fs;
	RecoveryRoot = %q;
	Graceless = true;
	Only_Numeric_Owners = true;
}
EXPORT {
	Export_Id = 1;
	Path = %q;
	Pseudo = /;
	Access_Type = RO;
	Squash = No_Root_Squash;
	Protocols = 4;
	Transports = TCP;
	SecType = sys;
	FSAL { Name = VFS; }
}
`, port, recovery, exportDir)
}

// freePort returns a loopback TCP port that was free a moment ago (nfs-ganesha takes the port from its
// configuration, so it cannot be handed a listener).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("realnfs: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Log returns the server's log so far, without the D-Bus and Kerberos complaints of a server started without
// either (nfs-ganesha logs them at start-up and carries on).
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	var keep []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, ":DBUS :") || strings.Contains(line, "krb5") || strings.Contains(line, "keytab") {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// Stop ends the server (SIGTERM, then SIGKILL after 10 seconds) and waits for it.
func (s *Server) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case <-s.done:
	case <-ctx.Done():
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}
