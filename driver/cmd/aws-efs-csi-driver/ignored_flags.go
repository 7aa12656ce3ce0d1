package main

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"
)

// ignoredFlag is an upstream v3.4.1 flag this driver does not implement.
type ignoredFlag struct {
	name, why string
	boolean   bool
}

// upstreamIgnoredFlags are the flags of upstream v3.4.1 (pkg/driver/options.go, cmd/main.go) that this driver
// accepts and ignores, so that a manifest written for upstream still starts: all S3 Files settings.
var upstreamIgnoredFlags = []ignoredFlag{
	{name: "s3files-cloudwatch-log-enabled", why: "S3 Files is not supported", boolean: true},
	{name: "s3files-cloudwatch-metrics-enabled", why: "S3 Files is not supported", boolean: true},
	{name: "s3files-utils-conf-overrides", why: "S3 Files is not supported"},
}

// ignoredFlags binds the upstream flags this driver ignores, hidden from --help.
type ignoredFlags struct {
	fs     *pflag.FlagSet
	values map[string]*string
}

func (f *ignoredFlags) addFlags(fs *pflag.FlagSet) {
	f.fs, f.values = fs, map[string]*string{}
	for _, fl := range upstreamIgnoredFlags {
		v := new(string)
		f.values[fl.name] = v
		fs.StringVar(v, fl.name, "", "Upstream flag, accepted and ignored: "+fl.why+".")
		if fl.boolean {
			fs.Lookup(fl.name).NoOptDefVal = "true"
		}
		_ = fs.MarkHidden(fl.name)
	}
}

// warnings names each ignored flag that was given.
func (f *ignoredFlags) warnings() []string {
	var w []string
	for _, fl := range upstreamIgnoredFlags {
		if f.fs != nil && f.fs.Changed(fl.name) {
			w = append(w, fmt.Sprintf("--%s=%s is an upstream flag this driver ignores: %s", fl.name, *f.values[fl.name], fl.why))
		}
	}
	slices.Sort(w)
	return w
}
