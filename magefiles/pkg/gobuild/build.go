package gobuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/progress"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/stamp"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
)

// Options says what to build and where.
type Options struct {
	// Root is the repository root (the directory holding go.work).
	Root string
	// OutDir receives <os>_<arch>/<binary>.
	OutDir string
	// Programs and Platforms span the artefacts: every program for every platform.
	Programs  []Program
	Platforms []platform.Platform
	// Stamps holds the provenance of each module, keyed by Program.Module.
	Stamps map[string]stamp.Stamp
	// Jobs bounds the compiles that run at once; 0 means one.
	Jobs int
	// Progress receives one line per artefact as it starts and finishes.
	Progress io.Writer
	// Mode is Static (the zero value) or FIPS.
	Mode Mode
}

// Result reports what happened to one artefact.
type Result struct {
	Artefact Artefact
	// Path is the absolute path of the binary.
	Path string
	// Compiled is false when the binary was already up to date.
	Compiled bool
}

// Build compiles every artefact whose inputs changed, in parallel, and returns one result per artefact in a fixed
// order. A failed compile leaves the previous binary, if any, in place.
func Build(ctx context.Context, opts Options) ([]Result, error) {
	goBin, err := toolchain.Find("go", "compile the binaries")
	if err != nil {
		return nil, err
	}
	settings, err := readGoSettings(ctx, opts.Root, goBin)
	if err != nil {
		return nil, err
	}
	mode, err := resolveMode(opts.Mode, settings, opts.Platforms)
	if err != nil {
		return nil, err
	}
	workDigest, err := workspaceDigest(opts.Root)
	if err != nil {
		return nil, err
	}
	moduleDigests := map[string]string{}
	for _, p := range opts.Programs {
		if _, ok := opts.Stamps[p.Module]; !ok {
			return nil, fmt.Errorf("no version stamp for module %q", p.Module)
		}
		if _, done := moduleDigests[p.Module]; done {
			continue
		}
		if moduleDigests[p.Module], err = treeDigest(filepath.Join(opts.Root, p.Module)); err != nil {
			return nil, err
		}
	}

	var artefacts []Artefact
	for _, p := range opts.Programs {
		for _, pl := range opts.Platforms {
			artefacts = append(artefacts, Artefact{Program: p, Platform: pl})
		}
	}
	report := progress.New(opts.Progress)
	results := make([]Result, len(artefacts))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(opts.Jobs, 1))
	for i, a := range artefacts {
		g.Go(func() error {
			c := compile{
				goBin:    goBin,
				root:     opts.Root,
				artefact: a,
				stamp:    opts.Stamps[a.Program.Module],
				mode:     mode,
				out:      filepath.Join(opts.OutDir, a.RelPath()),
			}
			inputs := combine(settings.fingerprint, workDigest, moduleDigests[a.Program.Module], a.Platform.String(),
				strings.Join(c.env(), " "), strings.Join(c.args(), " "))
			compiled, err := c.ifChanged(ctx, inputs, report, fmt.Sprintf("[%d/%d]", i+1, len(artefacts)))
			results[i] = Result{Artefact: a, Path: c.out, Compiled: compiled}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return results, nil
}

// workspaceDigest covers the files outside the modules that change what a module build resolves to.
func workspaceDigest(root string) (string, error) {
	var parts []string
	for _, name := range []string{"go.work", "go.work.sum"} {
		d, err := fileDigest(filepath.Join(root, name))
		if os.IsNotExist(err) {
			d = "absent"
		} else if err != nil {
			return "", err
		}
		parts = append(parts, name, d)
	}
	return combine(parts...), nil
}

// compile is the build of one artefact.
type compile struct {
	goBin    string
	root     string
	artefact Artefact
	stamp    stamp.Stamp
	mode     buildMode
	out      string
}

// args is the go build command line after "go build -o FILE". Everything here is part of the fingerprint.
func (c compile) args() []string {
	vp := c.artefact.Program.VersionPackage
	ldflags := strings.Join([]string{
		"-s", "-w", // no symbol table or DWARF: a third of the size; panics and pprof still symbolise from pclntab
		"-buildid=",
		"-X " + vp + ".version=" + c.stamp.Version,
		"-X " + vp + ".commit=" + c.stamp.Commit,
		"-X " + vp + ".treeState=" + c.stamp.TreeState(),
	}, " ")
	args := []string{"-trimpath", "-buildvcs=false", "-ldflags=" + ldflags}
	if c.mode.tags != "" {
		args = append(args, "-tags="+c.mode.tags)
	}
	return append(args, c.artefact.Program.Package())
}

// env is what the compile adds to the environment. Everything here is part of the fingerprint.
func (c compile) env() []string {
	return append([]string{"GOOS=" + c.artefact.Platform.OS, "GOARCH=" + c.artefact.Platform.Arch}, c.mode.env...)
}

// ifChanged compiles unless the binary on disk was produced from the same inputs and is intact.
func (c compile) ifChanged(ctx context.Context, inputs string, report *progress.Lines, counter string) (bool, error) {
	recordPath := filepath.Join(filepath.Dir(c.out), "."+filepath.Base(c.out)+".fingerprint")
	if prev, ok := readRecord(recordPath); ok && prev.Inputs == inputs {
		if digest, err := fileDigest(c.out); err == nil && digest == prev.Output {
			report.Printf("build: %s %s up to date, not recompiled", counter, c.artefact)
			return false, nil
		}
	}
	report.Printf("build: %s %s compiling (%s, %s, %s; %s)", counter, c.artefact, c.stamp.Version, shortCommit(c.stamp.Commit), c.stamp.TreeState(), c.mode.summary)
	start := time.Now()
	if err := c.run(ctx); err != nil {
		return false, err
	}
	digest, err := fileDigest(c.out)
	if err != nil {
		return false, err
	}
	if err := writeRecord(recordPath, record{Inputs: inputs, Output: digest}); err != nil {
		return false, err
	}
	report.Printf("build: %s %s done in %s", counter, c.artefact, time.Since(start).Round(100*time.Millisecond))
	return true, nil
}

// run compiles into a temporary file beside the target and renames it into place, so a failed or interrupted
// compile never leaves a truncated binary where a good one was, nor does a FIPS binary that fails check-payload's
// rules.
func (c compile) run(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
		return err
	}
	tmp := c.out + ".partial"
	defer os.Remove(tmp)
	args := append([]string{"build", "-o", tmp}, c.args()...)
	if _, err := toolchain.Output(ctx, filepath.Join(c.root, c.artefact.Program.Module), c.env(), c.goBin, args...); err != nil {
		return fmt.Errorf("compiling %s: %w", c.artefact, err)
	}
	if c.mode.mode == FIPS {
		if err := verifyFIPS(tmp, c.artefact); err != nil {
			return err
		}
	}
	return os.Rename(tmp, c.out)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
