package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
	"github.com/openshift/aws-efs-csi/driver/test/mounttarget"
	"github.com/openshift/aws-efs-csi/driver/test/nfsbackend"
	"github.com/openshift/aws-efs-csi/driver/test/realnfs"
)

// standin is everything efs-standin runs.
type standin struct {
	o       Options
	aws     *fakeaws.Server
	backend *nfsbackend.Server
	nfs     *realnfs.Server
	stunnel *mounttarget.Stunnel
	servers []*http.Server
	ready   Ready
}

// start brings everything up and writes the ready file; on failure it takes down what it started.
func start(o Options) (_ *standin, err error) {
	s := &standin{o: o}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	for _, d := range []string{o.Dir, o.BackingDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	s.aws = fakeaws.New(fakeaws.Options{Region: o.Region})
	if o.Latency > 0 {
		s.aws.SetFault("*", fakeaws.Fault{Latency: o.Latency})
	}
	for _, spec := range o.Faults {
		api, f, _ := fakeaws.ParseFaultSpec(spec) // checked by Validate
		s.aws.SetFault(api, f)
	}
	for _, spec := range o.Roles {
		arn, ext, _ := parseRole(spec) // checked by Validate
		s.aws.AddRole(arn, ext)
	}
	zones := s.aws.Options().Zones
	regional := s.aws.AddFileSystem(fakeaws.FileSystem{Name: "efs-standin-regional"})
	oneZone := s.aws.AddFileSystem(fakeaws.FileSystem{Name: "efs-standin-one-zone", AvailabilityZoneName: zones[0].Name})
	s.ready = Ready{PID: os.Getpid(), Region: o.Region, BackingDir: o.BackingDir,
		RegionalFileSystemID: regional, OneZoneFileSystemID: oneZone}

	s.backend = &nfsbackend.Server{BackingDir: o.BackingDir, AccessPoints: s.accessPoint}
	if o.NFSServer == NFSServerGanesha {
		if s.nfs, err = realnfs.StartServer(o.Dir, o.BackingDir); err != nil {
			return nil, fmt.Errorf("--nfs-server=%s: %w", o.NFSServer, err)
		}
		s.backend.NFSServer = s.nfs.Addr
		s.ready.NFSServer = s.nfs.Addr
	}
	if err := s.backend.Start(); err != nil {
		return nil, err
	}
	var services []mounttarget.Service
	dnsNames := []string{"localhost"}
	for _, fs := range []struct{ id, zone string }{{regional, ""}, {oneZone, zones[0].Name}} {
		backendAddr, err := s.backend.Listen(fs.id)
		if err != nil {
			return nil, err
		}
		rfs := ReadyFileSystem{ID: fs.id, AvailabilityZone: fs.zone, BackingDir: filepath.Join(o.BackingDir, fs.id)}
		for _, z := range zones {
			if fs.zone != "" && z.Name != fs.zone {
				continue
			}
			ip, err := mounttarget.FreeLoopback()
			if err != nil {
				return nil, err
			}
			s.aws.AddMountTarget(fs.id, z.Name, ip)
			rfs.MountTargets = append(rfs.MountTargets, ReadyMountTarget{Zone: z.Name, IP: ip})
			services = append(services, mounttarget.Service{Name: fs.id + "-" + z.Name,
				Accept: net.JoinHostPort(ip, strconv.Itoa(mounttarget.NFSPort)), Connect: backendAddr})
		}
		s.ready.FileSystems = append(s.ready.FileSystems, rfs)
		dnsNames = append(dnsNames, mounttarget.DNSName(fs.id, o.Region))
	}
	dnsNames = append(dnsNames, o.TLSNames...)
	authority, err := mounttarget.LoadOrCreateAuthority(o.CADir)
	if err != nil {
		return nil, err
	}
	ca, err := authority.Issue(o.Dir, dnsNames, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	s.ready.CAFile = ca.CAFile
	if s.stunnel, err = mounttarget.StartStunnel(o.Dir, ca, services); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(ca.CertFile, ca.KeyFile)
	if err != nil {
		return nil, err
	}
	awsURL, err := s.serve(o.AWSAddr, s.aws, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("--aws-addr: %w", err)
	}
	s.ready.AWSEndpoint = "https://" + awsURL
	controlURL, err := s.serve(o.ControlAddr, s.control(), nil)
	if err != nil {
		return nil, fmt.Errorf("--control-addr: %w", err)
	}
	s.ready.ControlURL = "http://" + controlURL
	if err := writeReady(o.ReadyFile, s.ready); err != nil {
		return nil, err
	}
	return s, nil
}

// serve serves h on addr (with TLS when cfg is set) and returns the address it listens on.
func (s *standin) serve(addr string, h http.Handler, cfg *tls.Config) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), nil
}

// control is the control endpoint: fakeaws' call counts and the backend's mount counts.
func (s *standin) control() http.Handler {
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /calls", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.aws.CallCounts()) })
	mux.HandleFunc("POST /calls/reset", func(w http.ResponseWriter, _ *http.Request) {
		s.aws.ResetCalls()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /mounts", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.backend.Mounts()) })
	mux.HandleFunc("GET /nfs-connections", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.backend.NFSConnections()) })
	// POST /faults sets fakeaws faults while it runs, one --fault spec per line (e.g. "*:latency=20ms"; a spec
	// with zero values clears: "*:latency=0s"), so that one cluster serves a test with and without latency.
	mux.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type set struct {
			api   string
			fault fakeaws.Fault
		}
		var sets []set
		for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
			api, f, err := fakeaws.ParseFaultSpec(strings.TrimSpace(line))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			sets = append(sets, set{api, f})
		}
		for _, x := range sets {
			s.aws.SetFault(x.api, x.fault)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// accessPoint looks an access point up in fakeaws for the backend.
func (s *standin) accessPoint(id string) (nfsbackend.AccessPoint, bool) {
	ap, ok := s.aws.AccessPoint(id)
	if !ok || ap.LifeCycleState != "available" {
		return nfsbackend.AccessPoint{}, false
	}
	return toBackend(ap)
}

// toBackend converts a fakeaws access point; ok is false when its CreationInfo cannot be read.
func toBackend(ap fakeaws.AccessPoint) (nfsbackend.AccessPoint, bool) {
	out := nfsbackend.AccessPoint{ID: ap.AccessPointId, FileSystemID: ap.FileSystemId, RootDir: ap.RootDirectory.Path}
	if out.RootDir == "" {
		out.RootDir = "/"
	}
	if ci := ap.RootDirectory.CreationInfo; ci != nil {
		perm, err := strconv.ParseUint(ci.Permissions, 8, 32)
		if err != nil || perm > 0o7777 {
			return out, false
		}
		out.Creation = &nfsbackend.CreationInfo{UID: uint32(ci.OwnerUid), GID: uint32(ci.OwnerGid), Permissions: uint32(perm)}
	}
	return out, true
}

// close stops everything in reverse order and removes the ready file.
func (s *standin) close() error {
	var errs []error
	// stunnel first: no new requests reach the backend while it takes its mounts off; then the NFS server, so
	// that no relayed NFS connection keeps the backend's Close waiting
	if s.stunnel != nil {
		s.stunnel.Stop()
	}
	s.nfs.Stop()
	if s.backend != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		errs = append(errs, s.backend.Close(ctx))
		cancel()
	}
	for _, srv := range s.servers {
		_ = srv.Close()
	}
	if err := os.Remove(s.o.ReadyFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
