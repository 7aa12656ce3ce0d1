package mount

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// dnsFileSystem finds the file system ID in an EFS DNS name such as [az.]fs-x.efs.region.amazonaws.com.
var dnsFileSystem = regexp.MustCompile(`(?:^|\.)(fs-[0-9a-f]+)\.efs\.`)

// existingMount is what the mount table (and efs-utils state) says about a mount found at a target that has no
// publish record, e.g. one made by the upstream driver before an upgrade.
type existingMount struct {
	device, fsType string
	// fsID, path and accessPoint are "" when unknown.
	fsID, path, accessPoint string
	knownAP                 bool
}

// identify reads the top mount at target from the mount table and, for TLS mounts, the efs-utils state file of
// its relay port.
func (m *Mounter) identify(target string) (existingMount, error) {
	mps, err := m.cfg.OS.List()
	if err != nil {
		return existingMount{}, fmt.Errorf("list mounts: %w", err)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		real = target
	}
	var found existingMount
	var opts []string
	for _, mp := range mps {
		if mp.Path == real || mp.Path == target {
			found = existingMount{device: mp.Device, fsType: mp.Type}
			opts = mp.Opts
		}
	}
	host, p, ok := strings.Cut(found.device, ":")
	if !ok || !strings.HasPrefix(found.fsType, "nfs") {
		return found, nil
	}
	found.path = p
	if sub := dnsFileSystem.FindStringSubmatch(host); sub != nil {
		found.fsID = sub[1]
	}
	if host == "127.0.0.1" {
		port := "2049"
		for _, o := range opts {
			if v, ok := strings.CutPrefix(o, "port="); ok {
				port = v
			}
		}
		found.fsID, found.accessPoint, found.knownAP = m.stateOf(real, port)
	}
	return found, nil
}

// stateOf reads the efs-utils state file of the TLS mount at mountpoint through the relay on port.
func (m *Mounter) stateOf(mountpoint, port string) (fsID, accessPoint string, ok bool) {
	if m.cfg.StateDir == "" {
		return "", "", false
	}
	suffix := "." + strings.TrimPrefix(strings.ReplaceAll(mountpoint, "/", "."), ".") + "." + port
	entries, err := os.ReadDir(m.cfg.StateDir)
	if err != nil {
		return "", "", false
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "fs-") || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(m.cfg.StateDir, e.Name()))
		if err != nil {
			continue
		}
		var st struct {
			FSID        string `json:"fsId"`
			AccessPoint string `json:"accessPoint"`
		}
		if json.Unmarshal(b, &st) != nil {
			continue
		}
		if st.FSID != "" {
			return st.FSID, st.AccessPoint, true
		}
		// A non-TLS mount of efs-utils 2.x/3.x through efs-proxy has a state file without the certificate fields
		// (aws/efs-utils@2341e82d bootstrap_proxy): the file system is the name's first element, and without TLS
		// there is no access point.
		if id, _, _ := strings.Cut(e.Name(), "."); id != "" {
			return id, "", true
		}
	}
	return "", "", false
}

// matches says whether the existing mount serves spec; nil when it does or cannot be told apart (an NFS mount
// by IP without relay state).
func (e existingMount) matches(spec Spec) error {
	if !strings.HasPrefix(e.fsType, "nfs") {
		return fmt.Errorf("it is a %s mount of %q, not an EFS volume", e.fsType, e.device)
	}
	wantFS, wantPath, _ := strings.Cut(spec.Source, ":")
	if e.path != wantPath || (e.fsID != "" && e.fsID != wantFS) {
		return fmt.Errorf("it has %s:%s mounted, the request is %s", orUnknown(e.fsID), e.path, spec.Source)
	}
	wantAP := ""
	if i := slices.IndexFunc(spec.Options, func(o string) bool { return strings.HasPrefix(o, "accesspoint=") }); i >= 0 {
		wantAP = strings.TrimPrefix(spec.Options[i], "accesspoint=")
	}
	if e.knownAP && e.accessPoint != wantAP {
		return fmt.Errorf("it is mounted through access point %q, the request is %q", e.accessPoint, wantAP)
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown file system>"
	}
	return s
}
