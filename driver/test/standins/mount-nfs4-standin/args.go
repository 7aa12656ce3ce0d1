package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// call is one mount.nfs4 invocation.
type call struct {
	Source, Target, Options string
	// Host and Export are the parts of Source; Port is the port= option (default 2049).
	Host, Export string
	Port         int
}

// parseArgs reads `SOURCE TARGET [-o OPTIONS] [-s] [-r] [-v] [-w] [-n] [-f]` as mount(8) and mount.efs pass them.
func parseArgs(args []string) (call, error) {
	var c call
	var pos []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o":
			if i+1 >= len(args) {
				return c, fmt.Errorf("-o: want a comma-separated option list")
			}
			if c.Options != "" {
				c.Options += ","
			}
			c.Options += args[i+1]
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// -s, -r, -v, -w, -n, -f: flags of mount.nfs4 that change nothing here
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 2 {
		return c, fmt.Errorf("usage: mount.nfs4 remotetarget dir [-o nfsoptions] (got %q)", args)
	}
	c.Source, c.Target = pos[0], filepath.Clean(pos[1])
	if !filepath.IsAbs(c.Target) {
		return c, fmt.Errorf("mount point %q: want an absolute path", pos[1])
	}
	host, export, ok := strings.Cut(c.Source, ":")
	if !ok || host == "" || !strings.HasPrefix(export, "/") {
		return c, fmt.Errorf("remote target %q: want host:/path", c.Source)
	}
	c.Host, c.Export, c.Port = host, export, 2049
	for _, o := range strings.Split(c.Options, ",") {
		if v, ok := strings.CutPrefix(o, "port="); ok {
			p, err := strconv.Atoi(v)
			if err != nil || p < 1 || p > 65535 {
				return c, fmt.Errorf("option port=%s: want a port number", v)
			}
			c.Port = p
		}
	}
	return c, nil
}

// stateKey is the suffix efs-utils gives the state file of the TLS mount at target through the relay on port:
// .<mount point with / as .>.<port> (efs_utils/state.py mount_key).
func stateKey(target string, port int) string {
	return "." + strings.TrimLeft(strings.ReplaceAll(target, "/", "."), ".") + "." + strconv.Itoa(port)
}
