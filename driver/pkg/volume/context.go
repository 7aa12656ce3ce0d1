package volume

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ErrInvalidContext is wrapped by every volume context parse error.
var ErrInvalidContext = errors.New("invalid volume context")

// Volume context keys, matched case-insensitively as upstream does.
const (
	KeyEncryptInTransit    = "encryptInTransit"
	KeyMountTargetIP       = "mounttargetip"
	KeyMountTargetIPMap    = "mounttargetipmap"
	KeyCrossAccount        = "crossaccount"
	KeyProvisionerIdentity = "storage.kubernetes.io/csiProvisionerIdentity"
	// KeyPath is the sub-directory attribute of v1/v2 PVs (deprecated upstream, removed in v3.0.0); still read so
	// that such PVs keep mounting.
	KeyPath = "path"
)

// Context is the parsed volume context (PV volumeAttributes) of an EFS volume.
type Context struct {
	// EncryptInTransit is nil when unset (the node defaults to true).
	EncryptInTransit *bool
	// MountTargetIP pins the mount target IP.
	MountTargetIP string
	// MountTargetIPs maps an availability zone (name or ID) to the mount target IP in it; written by the
	// controller for cross-account volumes.
	MountTargetIPs map[string]string
	// CrossAccount makes efs-utils resolve the mount target by AZ-ID DNS name.
	CrossAccount bool
	// Path is the legacy path attribute, cleaned: the sub-directory to mount when the handle has none.
	Path string
}

// ParseContext parses volume attributes. Unknown keys are refused, naming the key and the accepted ones.
func ParseContext(attrs map[string]string) (Context, error) {
	var c Context
	for k, v := range attrs {
		switch strings.ToLower(k) {
		case strings.ToLower(KeyEncryptInTransit):
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Context{}, fmt.Errorf("%w: %s %q: want true or false", ErrInvalidContext, k, v)
			}
			c.EncryptInTransit = &b
		case KeyMountTargetIP:
			ip, err := netip.ParseAddr(v)
			if err != nil {
				return Context{}, fmt.Errorf("%w: %s %q: want an IPv4 or IPv6 address", ErrInvalidContext, k, v)
			}
			c.MountTargetIP = ip.String()
		case KeyMountTargetIPMap:
			m, err := parseIPMap(v)
			if err != nil {
				return Context{}, fmt.Errorf("%w: %s %q: %w", ErrInvalidContext, k, v, err)
			}
			c.MountTargetIPs = m
		case KeyCrossAccount:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Context{}, fmt.Errorf("%w: %s %q: want true or false", ErrInvalidContext, k, v)
			}
			c.CrossAccount = b
		case KeyPath:
			if !strings.HasPrefix(v, "/") {
				return Context{}, fmt.Errorf("%w: %s %q: want an absolute path", ErrInvalidContext, k, v)
			}
			p, err := cleanSubPath(v)
			if err != nil {
				return Context{}, fmt.Errorf("%w: %s: %w", ErrInvalidContext, k, err)
			}
			if p == "/" {
				p = ""
			}
			c.Path = p
		case strings.ToLower(KeyProvisionerIdentity):
		default:
			return Context{}, fmt.Errorf("%w: unknown volume attribute %q: want one of %s, %s, %s, %s, %s (deprecated)", ErrInvalidContext, k,
				KeyEncryptInTransit, KeyMountTargetIP, KeyMountTargetIPMap, KeyCrossAccount, KeyPath)
		}
	}
	return c, nil
}

func parseIPMap(v string) (map[string]string, error) {
	var raw map[string]string
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf(`want a JSON object {"<zone>": "<ip>"}: %w`, err)
	}
	out := make(map[string]string, len(raw))
	for zone, ipStr := range raw {
		ip, err := netip.ParseAddr(ipStr)
		if err != nil || zone == "" {
			return nil, fmt.Errorf(`entry %q: %q: want a non-empty zone and an IP address`, zone, ipStr)
		}
		out[zone] = ip.String()
	}
	return out, nil
}

// Attributes formats the context as volume attributes, using the canonical key spelling.
func (c Context) Attributes() map[string]string {
	out := map[string]string{}
	if c.EncryptInTransit != nil {
		out[KeyEncryptInTransit] = strconv.FormatBool(*c.EncryptInTransit)
	}
	if c.MountTargetIP != "" {
		out[KeyMountTargetIP] = c.MountTargetIP
	}
	if len(c.MountTargetIPs) > 0 {
		b, _ := json.Marshal(c.MountTargetIPs) // map[string]string always marshals; keys come out sorted
		out[KeyMountTargetIPMap] = string(b)
	}
	if c.CrossAccount {
		out[KeyCrossAccount] = "true"
	}
	if c.Path != "" {
		out[KeyPath] = c.Path
	}
	return out
}
