package mount

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"unicode"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrInvalidOption is wrapped by every error about a mount option or its combination with volume attributes.
var ErrInvalidOption = errors.New("invalid mount options")

// FSType is the file system type the driver mounts: mount(8) runs /sbin/mount.efs for it.
const FSType = "efs"

// Node is where the volume is mounted: the zone picks the entry of a mount target IP map.
type Node struct {
	// Zone and ZoneID are the availability zone name and ID of the node; either may be empty when unknown.
	Zone, ZoneID string
}

// Request is everything a mount is composed from.
type Request struct {
	Handle  volume.Handle
	Context volume.Context
	// MountFlags are the PV / StorageClass mountOptions, as the capability carries them.
	MountFlags []string
	// ReadOnly publishes the volume read-only.
	ReadOnly bool
	Node     Node
}

// Spec is a composed mount: mount -t FSType -o Options Source <target>.
type Spec struct {
	Source  string
	FSType  string
	Options []string
}

// Key is a canonical form of the spec (options sorted) used to compare an existing mount with a request.
func (s Spec) Key() string {
	opts := slices.Clone(s.Options)
	sort.Strings(opts)
	return s.FSType + " " + s.Source + " " + strings.Join(opts, ",")
}

// option is one parsed mount option; value is "" for a flag.
type option struct{ key, value string }

func (o option) String() string {
	if o.value == "" {
		return o.key
	}
	return o.key + "=" + o.value
}

// tlsOnly are efs-utils options that need a TLS mount.
var tlsOnly = []string{"iam", "tlsport", "verify", "ocsp", "noocsp", "cafile", "awsprofile", "rolearn", "jwtpath"}

// exclusive are pairs of options that cannot be given together.
var exclusive = [][2]string{{"ro", "rw"}, {"hard", "soft"}, {"ocsp", "noocsp"}, {"tls", "notls"}}

// Compose builds the mount of a volume. Options are lower-cased (keys only; values keep their case, so that
// role ARNs and paths survive), de-duplicated and checked for conflicts; the driver then adds tls, accesspoint,
// mounttargetip, crossaccount and ro as the handle, the volume attributes and ReadOnly ask.
func Compose(r Request) (Spec, error) {
	user, err := parseFlags(r.MountFlags)
	if err != nil {
		return Spec{}, err
	}
	eit := r.Context.EncryptInTransit == nil || *r.Context.EncryptInTransit
	userTLS := take(&user, "tls") != nil
	if userTLS {
		klog.InfoS("Mount option tls is deprecated: TLS is on unless the volume attribute encryptInTransit is false")
		if !eit {
			return Spec{}, fmt.Errorf("%w: mount option tls conflicts with volume attribute encryptInTransit=false: remove one", ErrInvalidOption)
		}
	}
	ap, err := accessPoint(r.Handle, take(&user, "accesspoint"))
	if err != nil {
		return Spec{}, err
	}
	tls := eit || ap != ""
	if ap != "" && !eit {
		klog.InfoS("Access point volumes are always mounted with TLS; ignoring encryptInTransit=false", "accessPointID", ap)
	}
	if err := checkTLS(user, tls); err != nil {
		return Spec{}, err
	}
	ip, err := mountTargetIP(r, take(&user, "mounttargetip"))
	if err != nil {
		return Spec{}, err
	}
	if r.ReadOnly {
		if take(&user, "rw") != nil {
			klog.InfoS("Read-only publish: dropping mount option rw")
		}
		user = append(user, option{key: "ro"})
	}
	opts := make([]string, 0, len(user)+4)
	for _, o := range user {
		if o.key != "ro" {
			opts = append(opts, o.String())
		}
	}
	if tls {
		opts = append(opts, "tls")
	}
	if ap != "" {
		opts = append(opts, "accesspoint="+ap)
	}
	if ip != "" {
		opts = append(opts, "mounttargetip="+ip)
	}
	if r.Context.CrossAccount {
		opts = append(opts, "crossaccount")
	}
	if slices.ContainsFunc(user, func(o option) bool { return o.key == "ro" }) {
		opts = append(opts, "ro")
	}
	h := r.Handle
	if r.Context.Path != "" {
		// v2.x PVs name the sub-directory in the path attribute; the handle's path wins, as in v2.x.
		klog.InfoS("Volume attribute path is deprecated (removed upstream in v3.0.0): put the path in the volume handle (fs-…:/path)",
			"volumeID", h.String(), "path", r.Context.Path)
		if h.Path == "" {
			h.Path = r.Context.Path
		}
	}
	return Spec{Source: h.MountSource(), FSType: FSType, Options: opts}, nil
}

// parseFlags splits, lower-cases and de-duplicates mount options, drops awscredsuri and refuses conflicts.
func parseFlags(flags []string) ([]option, error) {
	var out []option
	for _, flag := range flags {
		for _, part := range strings.Split(flag, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if strings.IndexFunc(part, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
				return nil, fmt.Errorf("%w: mount option %q: want no spaces or control characters", ErrInvalidOption, part)
			}
			key, value, _ := strings.Cut(part, "=")
			o := option{key: strings.ToLower(key), value: value}
			if o.key == "" {
				return nil, fmt.Errorf("%w: mount option %q: want key or key=value", ErrInvalidOption, part)
			}
			switch {
			case strings.HasPrefix(o.key, "awscredsuri"):
				klog.InfoS("Dropping mount option: the driver does not use ECS credentials", "option", o.key)
				continue
			case o.key == "crossaccount":
				return nil, fmt.Errorf("%w: mount option crossaccount: set crossaccount in the provisioner secret (volume attribute) instead", ErrInvalidOption)
			}
			i := slices.IndexFunc(out, func(p option) bool { return p.key == o.key })
			if i < 0 {
				out = append(out, o)
				continue
			}
			if out[i].value != o.value {
				return nil, fmt.Errorf("%w: mount options %s and %s conflict: give one", ErrInvalidOption, out[i], o)
			}
		}
	}
	for _, pair := range exclusive {
		if has(out, pair[0]) && has(out, pair[1]) {
			return nil, fmt.Errorf("%w: mount options %s and %s conflict: give one", ErrInvalidOption, pair[0], pair[1])
		}
	}
	return out, nil
}

func has(opts []option, key string) bool {
	return slices.ContainsFunc(opts, func(o option) bool { return o.key == key })
}

// take removes the option key from opts and returns it, or nil.
func take(opts *[]option, key string) *option {
	i := slices.IndexFunc(*opts, func(o option) bool { return o.key == key })
	if i < 0 {
		return nil
	}
	o := (*opts)[i]
	*opts = slices.Delete(*opts, i, i+1)
	return &o
}

// accessPoint reconciles the handle's access point with a (deprecated) accesspoint= mount option.
func accessPoint(h volume.Handle, opt *option) (string, error) {
	if opt == nil {
		return h.AccessPointID, nil
	}
	klog.InfoS("Mount option accesspoint is deprecated: put the access point in the volume handle (fs-…::fsap-…)")
	if !volume.ValidAccessPointID(opt.value) {
		return "", fmt.Errorf("%w: mount option accesspoint=%s: want accesspoint=fsap-<8 to 40 hex digits>", ErrInvalidOption, opt.value)
	}
	if h.AccessPointID != "" && h.AccessPointID != opt.value {
		return "", fmt.Errorf("%w: mount option accesspoint=%s conflicts with access point %s of volume handle %s: remove the mount option",
			ErrInvalidOption, opt.value, h.AccessPointID, h)
	}
	return opt.value, nil
}

// checkTLS refuses options that efs-utils accepts only with (or only without) TLS.
func checkTLS(user []option, tls bool) error {
	for _, o := range user {
		if !tls && slices.Contains(tlsOnly, o.key) {
			return fmt.Errorf("%w: mount option %s needs TLS, but volume attribute encryptInTransit is false", ErrInvalidOption, o.key)
		}
		if tls && o.key == "port" {
			return fmt.Errorf("%w: mount option %s conflicts with TLS (efs-utils chooses the local port): remove it or set encryptInTransit=false", ErrInvalidOption, o)
		}
	}
	return nil
}

// mountTargetIP picks the mount target IP: the mounttargetip attribute or option, else the node's zone in the
// IP map (by AZ ID, then by AZ name for maps written by older controllers), else the map's first zone.
func mountTargetIP(r Request, opt *option) (string, error) {
	ip := r.Context.MountTargetIP
	if opt != nil {
		addr, err := netip.ParseAddr(opt.value)
		if err != nil {
			return "", fmt.Errorf("%w: mount option mounttargetip=%s: want an IPv4 or IPv6 address", ErrInvalidOption, opt.value)
		}
		opt.value = addr.String()
		if ip != "" && ip != opt.value {
			return "", fmt.Errorf("%w: mount option mounttargetip=%s conflicts with volume attribute mounttargetip=%s: give one", ErrInvalidOption, opt.value, ip)
		}
		ip = opt.value
	}
	if ip == "" && len(r.Context.MountTargetIPs) > 0 {
		ip = pickFromMap(r.Context.MountTargetIPs, r.Node)
	}
	if ip != "" && r.Context.CrossAccount {
		return "", fmt.Errorf("%w: volume attribute crossaccount=true conflicts with mount target IP %s (mounttargetip or mounttargetipmap): give one", ErrInvalidOption, ip)
	}
	return ip, nil
}

// pickFromMap takes the node's entry of a mounttargetipmap: by zone ID, else by zone name (maps written by older
// controllers), else the first zone in sorted order.
func pickFromMap(m map[string]string, n Node) string {
	zones := make([]string, 0, len(m))
	for z := range m {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	cands := make([]volume.MountTargetChoice, len(zones))
	for i, z := range zones {
		cands[i] = volume.MountTargetChoice{Zones: []string{z}, IP: m[z]}
	}
	ip, inZone, _ := volume.PickMountTarget(cands, n.ZoneID, n.Zone)
	if !inZone {
		klog.InfoS("No mount target in the node's zone; using another zone's (cross-zone traffic)",
			"zone", n.Zone, "zoneID", n.ZoneID, "usedZone", zones[0])
	}
	return ip
}
