package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a server the harness started. Its fields are enough to stop it from another process (`cluster:down`
// after `cluster:up`), so they are saved with the cluster's state.
type Process struct {
	Name string
	PID  int
	// Path is the executable, checked before signalling so that a reused PID is never killed.
	Path string
	// Log is the file that receives its standard output and error.
	Log string

	exited chan struct{} // closed when a process started by this one has been reaped; nil otherwise
	err    error
}

// LaunchOptions says how to start a server.
type LaunchOptions struct {
	// Detach puts the process in its own session with no parent-death signal, so it outlives the caller.
	Detach bool
	// ExtraFiles are inherited as descriptors 3, 4, ... (a lock that must be held while the process lives).
	ExtraFiles []*os.File
	// Env replaces the environment when set.
	Env []string
}

// Launch starts bin with args, its output appended to logDir/<name>.log.
func Launch(name, bin string, args []string, logDir string, opts LaunchOptions) (*Process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = opts.ExtraFiles
	cmd.Env = opts.Env
	if opts.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, PID: cmd.Process.Pid, Path: resolve(cmd.Path), Log: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited reports whether the process is known to have ended, with how, for error messages.
func (p *Process) Exited() (bool, string) {
	if p.exited != nil {
		select {
		case <-p.exited:
			return true, fmt.Sprintf("%s exited (%v); see %s", p.Name, p.err, p.Log)
		default:
			return false, ""
		}
	}
	if !p.alive() {
		return true, fmt.Sprintf("%s (pid %d) is gone; see %s", p.Name, p.PID, p.Log)
	}
	return false, ""
}

// Stop sends SIGTERM to the process (and its process group), waits up to grace, then kills it.
func (p *Process) Stop(grace time.Duration) {
	if !p.alive() {
		return
	}
	_ = syscall.Kill(p.PID, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for p.alive() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if p.alive() {
		_ = syscall.Kill(-p.PID, syscall.SIGKILL)
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
		for p.alive() {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive reports whether PID still runs Path (not reaped, not a zombie, not reused by another program).
func (p *Process) alive() bool {
	if p.exited != nil {
		select {
		case <-p.exited:
			return false
		default:
			return true
		}
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(p.PID) + "/exe")
	if err != nil {
		return false
	}
	if strings.TrimSuffix(exe, " (deleted)") != p.Path {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// resolve returns the absolute path without symbolic links, as /proc/<pid>/exe shows it.
func resolve(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}
