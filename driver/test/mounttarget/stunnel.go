package mounttarget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// StunnelPath is Debian's stunnel (package stunnel4), the same program efs-utils runs as the client.
const StunnelPath = "/usr/bin/stunnel4"

// Service is one TLS endpoint of the server: TLS on Accept (host:port), the plain stream forwarded to Connect.
type Service struct {
	Name, Accept, Connect string
}

// Stunnel is a running stunnel server.
type Stunnel struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// StartStunnel writes dir/stunnel-server.conf for the services with the CA's server certificate and starts
// stunnel in the foreground, in its own process group; it returns once every Accept address takes connections
// (or fails after 10 seconds with stunnel's log). The client certificate is not checked: efs-utils always presents
// one, and EFS reads the access point from it, which a backend cannot see behind stunnel (see package nfsbackend).
func StartStunnel(dir string, ca CA, services []Service) (*Stunnel, error) {
	if len(services) == 0 {
		return nil, errors.New("mounttarget: stunnel needs at least one service")
	}
	logFile := filepath.Join(dir, "stunnel-server.log")
	var b strings.Builder
	fmt.Fprintf(&b, "foreground = yes\npid =\noutput = %s\n", logFile)
	for _, s := range services {
		fmt.Fprintf(&b, "\n[%s]\naccept = %s\nconnect = %s\ncert = %s\nkey = %s\n", s.Name, s.Accept, s.Connect, ca.CertFile, ca.KeyFile)
	}
	conf := filepath.Join(dir, "stunnel-server.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		return nil, fmt.Errorf("mounttarget: write %s: %w", conf, err)
	}
	cmd := exec.Command(StunnelPath, conf)
	// no Pdeathsig: it fires when the starting OS thread ends, and Go ends locked threads (package nfsbackend
	// locks threads to enter mount namespaces)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mounttarget: start %s: %w", StunnelPath, err)
	}
	st := &Stunnel{cmd: cmd, done: make(chan struct{}), log: logFile}
	go func() { _ = cmd.Wait(); close(st.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for _, s := range services {
		for {
			c, err := net.DialTimeout("tcp", s.Accept, 200*time.Millisecond)
			if err == nil {
				_ = c.Close()
				break
			}
			select {
			case <-st.done:
				return nil, fmt.Errorf("mounttarget: stunnel exited before listening on %s: %s", s.Accept, st.Log())
			default:
			}
			if time.Now().After(deadline) {
				st.Stop()
				return nil, fmt.Errorf("mounttarget: stunnel not listening on %s after 10s: %v\n%s", s.Accept, err, st.Log())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return st, nil
}

// Log returns stunnel's log so far.
func (s *Stunnel) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// Stop ends stunnel (SIGTERM, then SIGKILL after 5 seconds) and waits for it.
func (s *Stunnel) Stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	select {
	case <-s.done:
	case <-ctx.Done():
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}
