//go:build ignore
// +build ignore

package main

import (
	_context "context"
	_flag "flag"
	_fmt "fmt"
	_io "io"
	_log "log"
	_os "os"
	_signal "os/signal"
	_filepath "path/filepath"
	_sort "sort"
	_strconv "strconv"
	_strings "strings"
	_syscall "syscall"
	_tabwriter "text/tabwriter"
	_time "time"
	wheeltargets_mageimport "github.com/openshift/aws-efs-csi/magefiles/internal/wheeltargets"
	
)

func main() {
	// Use local types and functions in order to avoid name conflicts with additional magefiles.
	type arguments struct {
		Verbose       bool          // print out log statements
		List          bool          // print out a list of targets
		Help          bool          // print out help for a specific target
		Timeout       _time.Duration // set a timeout to running the targets
		Args          []string      // args contain the non-flag command-line arguments
	}

	parseBool := func(env string) bool {
		val := _os.Getenv(env)
		if val == "" {
			return false
		}		
		b, err := _strconv.ParseBool(val)
		if err != nil {
			_log.Printf("warning: environment variable %s is not a valid bool value: %v", env, val)
			return false
		}
		return b
	}

	parseDuration := func(env string) _time.Duration {
		val := _os.Getenv(env)
		if val == "" {
			return 0
		}		
		d, err := _time.ParseDuration(val)
		if err != nil {
			_log.Printf("warning: environment variable %s is not a valid duration value: %v", env, val)
			return 0
		}
		return d
	}
	args := arguments{}
	fs := _flag.FlagSet{}
	fs.SetOutput(_os.Stdout)

	// default flag set with ExitOnError and auto generated PrintDefaults should be sufficient
	fs.BoolVar(&args.Verbose, "v", parseBool("MAGEFILE_VERBOSE"), "show verbose output when running targets")
	fs.BoolVar(&args.List, "l", parseBool("MAGEFILE_LIST"), "list targets for this binary")
	fs.BoolVar(&args.Help, "h", parseBool("MAGEFILE_HELP"), "print out help for a specific target")
	fs.DurationVar(&args.Timeout, "t", parseDuration("MAGEFILE_TIMEOUT"), "timeout in duration parsable format (e.g. 5m30s)")
	fs.Usage = func() {
		_fmt.Fprintf(_os.Stdout, `
%s [options] [target]

Commands:
  -l    list targets in this binary
  -h    show this help

Options:
  -h    show description of a target
  -t <string>
        timeout in duration parsable format (e.g. 5m30s)
  -v    show verbose output when running targets
 `[1:], _filepath.Base(_os.Args[0]))
	}
	if err := fs.Parse(_os.Args[1:]); err != nil {
		// flag will have printed out an error already.
		return
	}
	args.Args = fs.Args()
	if args.Help && len(args.Args) == 0 {
		fs.Usage()
		return
	}
		
	var printName = func(str string) string {
	// color is ANSI color type
	type color int

	// If you add/change/remove any items in this constant,
	// you will need to run "stringer -type=color" in this directory again.
	// NOTE: Please keep the list in an alphabetical order.
	const (
		black color = iota
		red
		green
		yellow
		blue
		magenta
		cyan
		white
		brightblack
		brightred
		brightgreen
		brightyellow
		brightblue
		brightmagenta
		brightcyan
		brightwhite
	)

	// AnsiColor are ANSI color codes for supported terminal colors.
	var ansiColor = map[color]string{
		black:         "\u001b[30m",
		red:           "\u001b[31m",
		green:         "\u001b[32m",
		yellow:        "\u001b[33m",
		blue:          "\u001b[34m",
		magenta:       "\u001b[35m",
		cyan:          "\u001b[36m",
		white:         "\u001b[37m",
		brightblack:   "\u001b[30;1m",
		brightred:     "\u001b[31;1m",
		brightgreen:   "\u001b[32;1m",
		brightyellow:  "\u001b[33;1m",
		brightblue:    "\u001b[34;1m",
		brightmagenta: "\u001b[35;1m",
		brightcyan:    "\u001b[36;1m",
		brightwhite:   "\u001b[37;1m",
	}

	const colorName = "blackredgreenyellowbluemagentacyanwhitebrightblackbrightredbrightgreenbrightyellowbrightbluebrightmagentabrightcyanbrightwhite"

	var colorIndex = [...]uint8{0, 5, 8, 13, 19, 23, 30, 34, 39, 50, 59, 70, 82, 92, 105, 115, 126}

	colorToLowerString := func(i color) string {
		if i < 0 || i >= color(len(colorIndex)-1) {
			return "color(" + _strconv.FormatInt(int64(i), 10) + ")"
		}
		return colorName[colorIndex[i]:colorIndex[i+1]]
	}

	// ansiColorReset is an ANSI color code to reset the terminal color.
	const ansiColorReset = "\033[0m"

	// defaultTargetAnsiColor is a default ANSI color for colorizing targets.
	// It is set to Cyan as an arbitrary color, because it has a neutral meaning
	var defaultTargetAnsiColor = ansiColor[cyan]

	getAnsiColor := func(color string) (string, bool) {
		colorLower := _strings.ToLower(color)
		for k, v := range ansiColor {
			colorConstLower := colorToLowerString(k)
			if colorConstLower == colorLower {
				return v, true
			}
		}
		return "", false
	}

	// Terminals which  don't support color:
	//
	//	TERM=vt100
	//	TERM=cygwin
	//	TERM=xterm-mono
	var noColorTerms = map[string]bool{
		"vt100":      false,
		"cygwin":     false,
		"xterm-mono": false,
	}

	// terminalSupportsColor checks if the current console supports color output
	//
	// Supported:
	//
	//	linux, mac, or windows's ConEmu, Cmder, putty, git-bash.exe, pwsh.exe
	//
	// Not supported:
	//
	//	windows cmd.exe, powerShell.exe
	terminalSupportsColor := func() bool {
		envTerm := _os.Getenv("TERM")
		if _, ok := noColorTerms[envTerm]; ok {
			return false
		}
		return true
	}

	// enableColor reports whether the user has requested to enable a color output.
	enableColor := func() bool {
		b, _ := _strconv.ParseBool(_os.Getenv("MAGEFILE_ENABLE_COLOR"))
		return b
	}

	// targetColor returns the ANSI color which should be used to colorize targets.
	targetColor := func() string {
		s, exists := _os.LookupEnv("MAGEFILE_TARGET_COLOR")
		if exists {
			if c, ok := getAnsiColor(s); ok {
				return c
			}
		}
		return defaultTargetAnsiColor
	}

	// store the color terminal variables, so that the detection isn't repeated for each target
	var enableColorValue = enableColor() && terminalSupportsColor()
	var targetColorValue = targetColor()

	if enableColorValue {
		return _fmt.Sprintf("%s%s%s", targetColorValue, str, ansiColorReset)
	}

	return str
}


	list := func() error {
		_fmt.Println(`Build, test and verify the AWS EFS CSI stack for OpenShift. Every target is a thin wrapper over a tested package under magefiles/internal; run them from the repository root as 'go tool mage <target>'.
`)
		targets := map[string]string{
			"all*": "runs the main job: everything a release engineer builds: Build, then Bundle.",
			"build": "cross-compiles aws-efs-csi-driver and aws-efs-csi-driver-operator into _output/bin/<os>_<arch>/.",
			"bundle": "renders, validates and packages the operator's OLM bundle (registry+v1) into _output/bundle/.",
			"catalog": "writes a file-based catalog holding the new bundle, for a custom CatalogSource, into _output/catalog/.",
			"images": "assembles aws-efs-utils-base, aws-efs-csi-driver and aws-efs-csi-driver-operator for every platform into one OCI layout per image under _output/images/ (and _output/images/digests.json), and pushes them when REGISTRY is set.",
			"konflux": "checks that the Konflux PipelineRuns of ci/tekton could build hermetically: every file they name exists (as the test suite checks), and beyond that the RPM lock resolves every package for every architecture and the bases of our own components in images/versions.conf are pinned by digest.",
			"test": "runs every test suite: go test with the race detector in each Go module, then the efs-utils pytest suite.",
			"verify": "checks gofmt, go vet, that go mod tidy and go work sync leave no diff, and names every offending file.",
			"wheels": "downloads the Python distributions pinned in requirements.txt.ocp into _output/wheels/ and verifies each file against its pinned sha256: a pure-Python wheel when one is pinned, else the source distribution (botocore's pinned hash is its sdist's, as OpenShift's aws-efs-utils installs it).",
			"wheels:lock": "recomputes the sha256 hashes of every pinned requirement in requirements.txt.ocp from the index.",
		}

		keys := make([]string, 0, len(targets))
		for name := range targets {
			keys = append(keys, name)
		}
		_sort.Strings(keys)

		_fmt.Println("Targets:")
		w := _tabwriter.NewWriter(_os.Stdout, 0, 4, 4, ' ', 0)
		for _, name := range keys {
			_fmt.Fprintf(w, "  %v\t%v\n", printName(name), targets[name])
		}
		err := w.Flush()
			if err == nil {
				_fmt.Println("\n* default target")
			}
		return err
	}

	var ctx _context.Context
	ctxCancel := func(){}

	// by deferring in a closure, we let the cancel function get replaced
	// by the getContext function.
	defer func() {
		ctxCancel()
	}()

	getContext := func() (_context.Context, func()) {
		if ctx == nil {
			if args.Timeout != 0 {
				ctx, ctxCancel = _context.WithTimeout(_context.Background(), args.Timeout)
			} else {
				ctx, ctxCancel = _context.WithCancel(_context.Background())
			}
		}

		return ctx, ctxCancel
	}

	runTarget := func(logger *_log.Logger, fn func(_context.Context) error) interface{} {
		var err interface{}
		ctx, cancel := getContext()
		d := make(chan interface{})
		go func() {
			defer func() {
				err := recover()
				d <- err
			}()
			err := fn(ctx)
			d <- err
		}()
		sigCh := make(chan _os.Signal, 1)
		_signal.Notify(sigCh, _syscall.SIGINT)
		select {
		case <-sigCh:
			logger.Println("cancelling mage targets, waiting up to 5 seconds for cleanup...")
			cancel()
			cleanupCh := _time.After(5 * _time.Second)

			select {
			// target exited by itself
			case err = <-d:
				return err
			// cleanup timeout exceeded
			case <-cleanupCh:
				return _fmt.Errorf("cleanup timeout exceeded")
			// second SIGINT received
			case <-sigCh:
				logger.Println("exiting mage")
				return _fmt.Errorf("exit forced")
			}
		case <-ctx.Done():
			cancel()
			e := ctx.Err()
			_fmt.Printf("ctx err: %v\n", e)
			return e
		case err = <-d:
			// we intentionally don't cancel the context here, because
			// the next target will need to run with the same _context.
			return err
		}
	}
	// This is necessary in case there aren't any targets, to avoid an unused
	// variable error.
	_ = runTarget

	handleError := func(logger *_log.Logger, err interface{}) {
		if err != nil {
			logger.Printf("Error: %+v\n", err)
			type code interface {
				ExitStatus() int
			}
			if c, ok := err.(code); ok {
				_os.Exit(c.ExitStatus())
			}
			_os.Exit(1)
		}
	}
	_ = handleError

	// Set MAGEFILE_VERBOSE so mg.Verbose() reflects the flag value.
	if args.Verbose {
		_os.Setenv("MAGEFILE_VERBOSE", "1")
	} else {
		_os.Setenv("MAGEFILE_VERBOSE", "0")
	}

	_log.SetFlags(0)
	if !args.Verbose {
		_log.SetOutput(_io.Discard)
	}
	logger := _log.New(_os.Stderr, "", 0)
	if args.List {
		if err := list(); err != nil {
			_log.Println(err)
			_os.Exit(1)
		}
		return
	}

	if args.Help {
		if len(args.Args) < 1 {
			logger.Println("no target specified")
			_os.Exit(2)
		}
		switch _strings.ToLower(args.Args[0]) {
			case "all":
				_fmt.Println("All runs the main job: everything a release engineer builds: Build, then Bundle. Images are not part of it: their bases come from registries (see docs/images.md); without their digests Bundle pins what it can and prints which images are not pinned (docs/release.md).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage all\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "build":
				_fmt.Println("Build cross-compiles aws-efs-csi-driver and aws-efs-csi-driver-operator into _output/bin/<os>_<arch>/. Binaries are static, built with -trimpath and no build ID, so one commit always gives byte-identical files; each is stamped with its module's version (tag driver/vX.Y.Z or operator/vX.Y.Z at HEAD, else the module's VERSION file), the commit and a dirty flag, which --version prints; unchanged binaries are not recompiled. Environment: PLATFORMS=os/arch[,os/arch...] picks the platforms (default linux/amd64 and linux/arm64, where EFS runs; linux/ppc64le and linux/s390x on request); PROGRAMS=<binary>[,...] builds only those programs (an image's builder stage compiles only its own); BUILD_JOBS=N bounds the parallel compiles (default the number of CPUs).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage build\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "bundle":
				_fmt.Println("Bundle renders, validates and packages the operator's OLM bundle (registry+v1) into _output/bundle/. It renders the bundle for the operator module's version into _output/bundle/{manifests,metadata}, validates it with github.com/operator-framework/api's validators and the OpenShift checks (any error fails, warnings are printed), and assembles the bundle image FROM scratch into _output/bundle-image/, pushed as $REGISTRY/aws-efs-csi-driver-operator-bundle:<tag> when REGISTRY is set. Each image of operator/manifests/images.yaml is pinned by digest from BUNDLE_IMAGES, else from a pushed image in _output/images/digests.json ('REGISTRY=... go tool mage images'); an image pinned by neither gets its development tag and a warning, and fails the target when REGISTRY is set or BUNDLE_REQUIRE_DIGESTS=true. Environment: BUNDLE_IMAGES=<file> (lines PLACEHOLDER=<repository>@sha256:<digest>); BUNDLE_REQUIRE_DIGESTS; REGISTRY, IMAGE_TAG, REGISTRY_INSECURE, SOURCE_DATE_EPOCH, PLATFORMS as for images. See docs/release.md.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage bundle\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "catalog":
				_fmt.Println("Catalog writes a file-based catalog holding the new bundle, for a custom CatalogSource, into _output/catalog/. It runs Bundle, then writes the catalog (olm.package, olm.channel whose new entry replaces the channel head and carries the CSV's skipRange, olm.bundle) for a custom CatalogSource into _output/catalog/, or adds the bundle to the existing catalog directory CATALOG_DIR, and checks it. With CATALOG_BASE (an opm image: registry reference or oci:<layout dir>), or REGISTRY (base registry.redhat.io/openshift4/ose-operator-registry- rhel9:v4.22), it assembles the catalog image into _output/catalog-image/ (configs under /configs, 'opm serve') and pushes it as $REGISTRY/aws-efs-csi-driver-operator-catalog:<tag>; without either it says the image was not built. Environment: CATALOG_DIR, CATALOG_BASE, CATALOG_BUNDLE_IMAGE=<repository>@sha256:<digest> (the bundle's pull spec, default the pushed bundle); the bundle's and images' variables. See docs/release.md.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage catalog\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "images":
				_fmt.Println("Images assembles aws-efs-utils-base, aws-efs-csi-driver and aws-efs-csi-driver-operator for every platform into one OCI layout per image under _output/images/ (and _output/images/digests.json), and pushes them when REGISTRY is set. It runs build and wheels first; a pinned sdist (botocore) is built into a wheel with the host's python3 and its pip, setuptools and wheel, offline and without build isolation, once per sdist sha256 (_output/wheels/built/<sha256>/; WHEELS_PYTHON names another interpreter). Layers are reproducible (sorted, root-owned, dated SOURCE_DATE_EPOCH or the commit time), so the same inputs give the same digests; unchanged layers and images are not rebuilt, rewritten or pushed again. See docs/images.md. Environment: AWS_EFS_UTILS_BASE_FROM, AWS_EFS_CSI_DRIVER_FROM, AWS_EFS_CSI_DRIVER_OPERATOR_FROM=<registry reference | oci:<layout dir>[:<ref name>]> (the bases; defaults in docs/images.md; the efs-utils base must provide python3 >= 3.9, stunnel and mount.nfs4); REGISTRY=host[:port][/namespace]; IMAGE_TAG (default each module's version); REGISTRY_INSECURE=true allows plain HTTP (loopback registries always may); RELEASE (label, default the short commit); SOURCE_DATE_EPOCH; IMAGE_JOBS (default the CPU count); PLATFORMS as for build.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage images\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "konflux":
				_fmt.Println("Konflux checks that the Konflux PipelineRuns of ci/tekton could build hermetically: every file they name exists (as the test suite checks), and beyond that the RPM lock resolves every package for every architecture and the bases of our own components in images/versions.conf are pinned by digest. It fails naming each gap; a green run means a hermetic Konflux build has what it needs. See ci/README.md.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage konflux\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "test":
				_fmt.Println("Test runs every test suite: go test with the race detector in each Go module, then the efs-utils pytest suite. It first installs the system packages the suites need when it runs as root on Debian (apt-get); anywhere else it stops and prints the exact apt-get command. Every suite runs even after a failure, and the last line counts the suites that passed and failed. Environment: GOTEST_FLAGS adds flags to every go test run, e.g. GOTEST_FLAGS=\"-run TestSanity -v\" or GOTEST_FLAGS=-count=1.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage test\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "verify":
				_fmt.Println("Verify checks gofmt, go vet, that go mod tidy and go work sync leave no diff, and names every offending file. It never edits the tree: files that go work sync touches are put back after the comparison.")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage verify\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "wheels":
				_fmt.Println("Wheels downloads the Python distributions pinned in requirements.txt.ocp into _output/wheels/ and verifies each file against its pinned sha256: a pure-Python wheel when one is pinned, else the source distribution (botocore's pinned hash is its sdist's, as OpenShift's aws-efs-utils installs it). Every requirement must be name==version with --hash=sha256: lines; anything else fails naming the line. Files already verified in _output/wheels/ are not downloaded again, so later runs work offline. Environment: WHEELS_INDEX_URL=<PEP 503/691 simple index> (default https://pypi.org/simple); WHEELS_REQUIREMENTS=<file> (default requirements.txt.ocp at the repository root).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage wheels\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
			case "wheels:lock":
				_fmt.Println("Lock recomputes the sha256 hashes of every pinned requirement in requirements.txt.ocp from the index. It downloads every file the index lists for each pinned version (wheels and sdists), hashes it, refuses a file whose hash disagrees with the one the index advertises, and rewrites each requirement with one --hash=sha256: line per file; comments and other lines stay as they are. Versions are never changed. Environment: WHEELS_INDEX_URL=<PEP 503/691 simple index> (default https://pypi.org/simple); WHEELS_REQUIREMENTS=<file> (default requirements.txt.ocp at the repository root).")
				_fmt.Println()
				
				_fmt.Print("Usage:\n\n\tmage wheels:lock\n\n")
				var aliases []string
				if len(aliases) > 0 {
					_sort.Strings(aliases)
					_fmt.Printf("Aliases: %s\n\n", _strings.Join(aliases, ", "))
				}
				return
				default:
				logger.Printf("Unknown target: %q\n", args.Args[0])
				_os.Exit(2)
		}
	}
	if len(args.Args) < 1 {
		ignoreDefault, _ := _strconv.ParseBool(_os.Getenv("MAGEFILE_IGNOREDEFAULT"))
		if ignoreDefault {
			if err := list(); err != nil {
				logger.Println("Error:", err)
				_os.Exit(1)
			}
			return
		}
		
				wrapFn := func(ctx _context.Context) error {
					All(ctx)
					return nil
				}
				ret := runTarget(logger, wrapFn)
		handleError(logger, ret)
		return
	}
	for x := 0; x < len(args.Args); {
		target := args.Args[x]
		x++

		// resolve aliases
		switch _strings.ToLower(target) {
		
		}

		switch _strings.ToLower(target) {
		
			case "all":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"All\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "All")
				}
				
				wrapFn := func(ctx _context.Context) error {
					All(ctx)
					return nil
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "build":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Build\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Build")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Build(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "bundle":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Bundle\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Bundle")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Bundle(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "catalog":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Catalog\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Catalog")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Catalog(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "images":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Images\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Images")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Images(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "konflux":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Konflux\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Konflux")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Konflux()
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "test":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Test\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Test")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Test(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "verify":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Verify\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Verify")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Verify(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
			case "wheels":
				expected := x + 0
				if expected > len(args.Args) {
					// note that expected and args at this point include the arg for the target itself
					// so we subtract 1 here to show the number of args without the target.
					logger.Printf("not enough arguments for target \"Wheels\", expected %v, got %v\n", expected-1, len(args.Args)-1)
					_os.Exit(2)
				}
				if args.Verbose {
					logger.Println("Running target:", "Wheels")
				}
				
				wrapFn := func(ctx _context.Context) error {
					return Wheels(ctx)
				}
				ret := runTarget(logger, wrapFn)
				handleError(logger, ret)
		
		
			
				case "wheels:lock":
					expected := x + 0
					if expected > len(args.Args) {
						// note that expected and args at this point include the arg for the target itself
						// so we subtract 1 here to show the number of args without the target.
						logger.Printf("not enough arguments for target \"wheels:Lock\", expected %v, got %v\n", expected-1, len(args.Args)-1)
						_os.Exit(2)
					}
					if args.Verbose {
						logger.Println("Running target:", "wheels:Lock")
					}
					
				wrapFn := func(ctx _context.Context) error {
					return wheeltargets_mageimport.Lock(ctx)
				}
				ret := runTarget(logger, wrapFn)
					handleError(logger, ret)
		default:
			logger.Printf("Unknown target specified: %q\n", target)
			_os.Exit(2)
		}
	}
}




