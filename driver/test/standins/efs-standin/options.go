package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openshift/aws-efs-csi/driver/test/fakeaws"
)

// Options are the command-line options of efs-standin.
type Options struct {
	// Dir is the work directory: CA and certificates, stunnel's configuration and log, the backing store and the
	// ready file unless placed elsewhere.
	Dir string
	// ReadyFile is where the ready document (Ready, JSON) is written once everything serves; default Dir/ready.json.
	ReadyFile string
	// BackingDir holds one directory per file system; default Dir/backing.
	BackingDir string
	// Region is the region fakeaws serves and the mount target names are in.
	Region string
	// AWSAddr and ControlAddr are where fakeaws (HTTPS) and the control endpoint (HTTP) listen.
	AWSAddr, ControlAddr string
	// TLSNames are extra DNS names in fakeaws' server certificate (127.0.0.1 and localhost are always in it).
	TLSNames []string
	// Latency is added to every AWS call (fakeaws fault "*:latency=...").
	Latency time.Duration
	// Faults are further fakeaws faults, API:key=value,... (fakeaws.ParseFaultSpec).
	Faults []string
	// CADir holds the test CA (ca.pem, ca.key), reused when present; default Dir.
	CADir string
	// Roles are ARN[,external-id=VALUE] roles STS lets callers assume (AssumeRole, AssumeRoleWithWebIdentity).
	Roles []string
	// NFSServer is the real NFS server behind the mount targets: "ganesha" (nfs-ganesha exporting the backing
	// store read-only; the mount.nfs4 stand-in lists each directory over NFS before it is mounted) or "none".
	NFSServer string
	// InitCA only creates (or checks) the CA in CADir, prints the path of ca.pem and exits: for baking the CA into
	// a test image before the program runs.
	InitCA bool
}

// The values of --nfs-server.
const (
	NFSServerGanesha = "ganesha"
	NFSServerNone    = "none"
)

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Dir, "dir", "", "work directory (required): CA, certificates, stunnel files, backing store, ready file")
	fs.StringVar(&o.ReadyFile, "ready-file", "", "where to write the ready document (JSON) once everything serves (default <dir>/ready.json)")
	fs.StringVar(&o.BackingDir, "backing-dir", "", "directory with one directory per file system, its root (default <dir>/backing)")
	fs.StringVar(&o.Region, "region", "us-east-1", "region of fakeaws and of the mount target DNS names")
	fs.StringVar(&o.AWSAddr, "aws-addr", "127.0.0.1:0", "listen address of fakeaws over HTTPS (EFS, EC2, STS on one endpoint)")
	fs.StringVar(&o.ControlAddr, "control-addr", "127.0.0.1:0", "listen address of the control endpoint (HTTP: /calls, /mounts, /faults)")
	fs.StringSliceVar(&o.TLSNames, "tls-name", nil, "extra DNS name in fakeaws' certificate, repeatable (127.0.0.1 and localhost are always in it)")
	fs.DurationVar(&o.Latency, "aws-latency", 0, "latency added to every AWS call, e.g. 20ms (fakeaws fault *:latency=...)")
	fs.StringVar(&o.CADir, "ca-dir", "", "directory of the test CA (ca.pem, ca.key), reused when present, created otherwise (default <dir>)")
	fs.StringArrayVar(&o.Roles, "role", nil, "ARN[,external-id=VALUE] role STS lets callers assume (AssumeRole, AssumeRoleWithWebIdentity), repeatable")
	fs.StringVar(&o.NFSServer, "nfs-server", NFSServerGanesha, "real NFS server behind the mount targets: ganesha (nfs-ganesha exporting the backing store read-only over NFSv4) or none")
	fs.BoolVar(&o.InitCA, "init-ca", false, "only create or check the CA in --ca-dir, print the path of its ca.pem and exit")
	fs.StringArrayVar(&o.Faults, "fault", nil, "further fakeaws fault API:key=value[,key=value], repeatable (see driver/test/fakeaws/README.md)")
}

// Validate checks the options and fills in the defaults that depend on --dir.
func (o *Options) Validate() error {
	if o.InitCA {
		if o.CADir == "" || !filepath.IsAbs(o.CADir) {
			return fmt.Errorf("--ca-dir %q: want an absolute directory path with --init-ca", o.CADir)
		}
		return nil
	}
	if o.Dir == "" || !filepath.IsAbs(o.Dir) {
		return fmt.Errorf("--dir %q: want an absolute directory path", o.Dir)
	}
	if o.ReadyFile == "" {
		o.ReadyFile = filepath.Join(o.Dir, "ready.json")
	}
	if o.BackingDir == "" {
		o.BackingDir = filepath.Join(o.Dir, "backing")
	}
	if o.CADir == "" {
		o.CADir = o.Dir
	}
	if !filepath.IsAbs(o.ReadyFile) || !filepath.IsAbs(o.BackingDir) || !filepath.IsAbs(o.CADir) {
		return fmt.Errorf("--ready-file %q, --backing-dir %q and --ca-dir %q: want absolute paths", o.ReadyFile, o.BackingDir, o.CADir)
	}
	if o.NFSServer == "" {
		o.NFSServer = NFSServerGanesha
	}
	if o.NFSServer != NFSServerGanesha && o.NFSServer != NFSServerNone {
		return fmt.Errorf("--nfs-server %q: want %s or %s", o.NFSServer, NFSServerGanesha, NFSServerNone)
	}
	if o.Latency < 0 {
		return fmt.Errorf("--aws-latency %s: want a duration >= 0 such as 20ms", o.Latency)
	}
	for _, f := range o.Faults {
		if _, _, err := fakeaws.ParseFaultSpec(f); err != nil {
			return fmt.Errorf("--fault: %w", err)
		}
	}
	for _, r := range o.Roles {
		if _, _, err := parseRole(r); err != nil {
			return err
		}
	}
	return nil
}

// parseRole parses ARN[,external-id=VALUE].
func parseRole(spec string) (arn, externalID string, err error) {
	arn, ext, hasExt := strings.Cut(spec, ",external-id=")
	if !strings.HasPrefix(arn, "arn:") || !strings.Contains(arn, ":role/") || hasExt && ext == "" {
		return "", "", fmt.Errorf("--role %q: want ARN[,external-id=VALUE] with ARN like arn:aws:iam::123456789012:role/name", spec)
	}
	return arn, ext, nil
}
