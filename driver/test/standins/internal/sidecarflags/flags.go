// Package sidecarflags gives the stand-ins the command-line syntax of the kubernetes-csi sidecars they replace, so
// the operator's manifests run them unchanged: Go's flag package (-v=2 and --v=2 both work), klog's -v and
// --vmodule, and the real sidecar's flags that a stand-in does not implement, accepted with a warning.
package sidecarflags

import (
	"flag"
	"fmt"
	"io"
	"sort"

	"k8s.io/klog/v2"
)

// FlagSet is a flag set that also accepts, and remembers, flags of the real sidecar that the stand-in ignores.
type FlagSet struct {
	*flag.FlagSet
	ignored []string
}

// New returns an empty flag set for the stand-in called name. Parse errors are returned, not printed.
func New(name string) *FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &FlagSet{FlagSet: fs}
}

// Ignore registers flags that the real sidecar has and the stand-in does not act on; each one set is listed by
// Ignored. Bool flags (isBool) take no value, as in the real sidecar.
func (f *FlagSet) Ignore(isBool bool, names ...string) {
	for _, name := range names {
		f.Var(&ignoredFlag{name: name, isBool: isBool, set: f}, name, "accepted for compatibility with the real sidecar; ignored by this stand-in")
	}
}

// Ignored returns the ignored flags set on the command line, as --name=value, sorted.
func (f *FlagSet) Ignored() []string {
	out := append([]string(nil), f.ignored...)
	sort.Strings(out)
	return out
}

// AddLogging binds -v and --vmodule to klog and ignores the other logging flags that both real sidecars take from
// k8s.io/component-base (text format only here) and csi-lib-utils (--automaxprocs).
func (f *FlagSet) AddLogging() {
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	for _, name := range []string{"v", "vmodule"} {
		kf := kfs.Lookup(name)
		f.Var(kf.Value, name, kf.Usage)
	}
	f.Ignore(false, "logging-format", "log-flush-frequency", "log-text-info-buffer-size", "log-json-info-buffer-size")
	f.Ignore(true, "log-text-split-stream", "log-json-split-stream", "automaxprocs")
}

// ignoredFlag is the flag.Value of an ignored flag: setting it only records the value.
type ignoredFlag struct {
	name   string
	isBool bool
	set    *FlagSet
}

func (i *ignoredFlag) String() string { return "" }

func (i *ignoredFlag) Set(v string) error {
	i.set.ignored = append(i.set.ignored, fmt.Sprintf("--%s=%s", i.name, v))
	return nil
}

// IsBoolFlag lets a bool flag appear without a value (flag.boolFlag).
func (i *ignoredFlag) IsBoolFlag() bool { return i.isBool }
