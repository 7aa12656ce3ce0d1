package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openshift/aws-efs-csi/driver/test/nfsbackend"
	"github.com/openshift/aws-efs-csi/driver/test/realnfs"
)

const (
	exitUsage   = 1
	exitFailure = 32
	// defaultStateDir is efs-utils' state directory when EFS_UTILS_STATE_DIR is not set.
	defaultStateDir = "/var/run/efs"
)

func run(args, environ []string) (int, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c, err := parseArgs(args)
	if err != nil {
		return exitUsage, err
	}
	req := nfsbackend.Request{Export: c.Export, Target: c.Target, Source: c.Source, Options: c.Options,
		MountTable: env["EFS_UTILS_PROC_MOUNTS"]}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		return exitFailure, fmt.Errorf("mount namespace: %w", err)
	}
	req.MountNamespace = st.Ino
	stateDir := env["EFS_UTILS_STATE_DIR"]
	if stateDir == "" {
		stateDir = defaultStateDir
	}
	if c.Host == "127.0.0.1" {
		cert, err := clientCertificate(stateDir, c.Target, c.Port)
		if err != nil {
			return exitFailure, err
		}
		req.Certificate = cert
	}
	addr := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	resolve := req
	resolve.Resolve = true
	resp, err := askServer(addr, resolve, c.Source)
	if err != nil {
		return exitFailure, err
	}
	if resp.NFSPath != "" {
		// A real NFS server is behind the mount target: talk NFS to it through the same relay before mounting,
		// so that a relay that carries the stand-in's requests but not NFS traffic fails the mount.
		ctx, cancel := context.WithTimeout(context.Background(), nfsListTimeout)
		defer cancel()
		if _, err := realnfs.List(ctx, c.Host, c.Port, resp.NFSPath); errors.Is(err, exec.ErrNotFound) {
			return exitFailure, err // the image lacks the NFS client: no retry helps
		} else if err != nil {
			return exitFailure, fmt.Errorf("Connection reset by peer (stand-in: NFS through %s failed: %v)", addr, err)
		}
		// like mount.nfs4, nothing is printed on success
	}
	if _, err := askServer(addr, req, c.Source); err != nil {
		return exitFailure, err
	}
	return 0, nil
}

// nfsListTimeout bounds the NFS listing before a mount.
const nfsListTimeout = 30 * time.Second

// askServer sends req through the relay at addr and returns the answer, or the error mount.nfs4 would print.
func askServer(addr string, req nfsbackend.Request, source string) (nfsbackend.Response, error) {
	resp, err := ask(addr, req)
	if err != nil {
		// what mount.nfs4 says when the relay drops the connection; efs-utils retries on "reset by peer"
		return resp, fmt.Errorf("Connection reset by peer (stand-in: no answer from the NFS server through %s: %v)", addr, err)
	}
	if resp.Error != "" {
		return resp, fmt.Errorf("mounting %s failed, reason given by server: %s", source, resp.Error)
	}
	return resp, nil
}

// ask sends the request and reads the answer.
func ask(addr string, req nfsbackend.Request) (nfsbackend.Response, error) {
	var resp nfsbackend.Response
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return resp, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := nfsbackend.WriteMessage(conn, req); err != nil {
		return resp, err
	}
	err = nfsbackend.ReadMessage(bufio.NewReader(conn), &resp)
	return resp, err
}

// clientCertificate returns the PEM certificate efs-utils gave the relay of the mount at target on port: the
// "certificate" of its state file (the temporary ~fs-… file while mount.efs runs, fs-… afterwards).
func clientCertificate(stateDir, target string, port int) (string, error) {
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return "", fmt.Errorf("efs-utils state directory: %w", err)
	}
	suffix := stateKey(target, port)
	for _, e := range entries {
		name := strings.TrimPrefix(e.Name(), "~")
		if e.IsDir() || !strings.HasPrefix(name, "fs-") || !strings.HasSuffix(name, suffix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(stateDir, e.Name()))
		if err != nil {
			return "", err
		}
		var state struct {
			Certificate string `json:"certificate"`
		}
		if err := json.Unmarshal(b, &state); err != nil || state.Certificate == "" {
			continue
		}
		pem, err := os.ReadFile(state.Certificate)
		if err != nil {
			return "", fmt.Errorf("client certificate of %s: %w", e.Name(), err)
		}
		return string(pem), nil
	}
	return "", errors.New("no efs-utils state file for " + target + " on port " + strconv.Itoa(port) + " in " + stateDir)
}
