package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Mode selects which CSI services the process serves.
type Mode string

// The modes of DESIGN.md §2: node-only machinery never runs in the controller and the reverse.
const (
	ModeController Mode = "controller"
	ModeNode       Mode = "node"
	ModeAll        Mode = "all"
)

var modes = []Mode{ModeController, ModeNode, ModeAll}

// Options holds every command-line setting of aws-efs-csi-driver.
type Options struct {
	// Version prints the build provenance and exits.
	Version bool
	// Mode is controller, node or all.
	Mode Mode
	// Endpoint is the CSI gRPC listen address, unix:///path/to/csi.sock.
	Endpoint string
}

// AddFlags binds the options onto fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Version, "version", false, "Print the driver version, commit and tree state, then exit.")
	fs.StringVar((*string)(&o.Mode), "mode", string(ModeAll), "Which CSI services to serve: controller, node or all.")
	fs.StringVar(&o.Endpoint, "endpoint", "unix:///var/lib/csi/sockets/pluginproxy/csi.sock", "CSI gRPC endpoint, unix:///absolute/path.")
}

// Validate checks the options together and names the flag and its accepted form on error.
func (o *Options) Validate() error {
	valid := false
	for _, m := range modes {
		valid = valid || o.Mode == m
	}
	if !valid {
		return fmt.Errorf("--mode %q: want one of %s", o.Mode, joinModes())
	}
	if !strings.HasPrefix(o.Endpoint, "unix:///") {
		return fmt.Errorf("--endpoint %q: want unix:///absolute/path/to/csi.sock", o.Endpoint)
	}
	return nil
}

func joinModes() string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
