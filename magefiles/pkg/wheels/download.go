package wheels

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// Download makes e.Dir hold a verified file of every requirement with pip download --require-hashes --no-deps:
// pip picks a file whose sha256 is pinned (a wheel when one is pinned and fits, else the sdist, as for botocore),
// checks every byte against the pins and keeps only what matches. It first asks pip to find everything in e.Dir
// alone (--no-index), so a second run needs no network; only when that fails does pip read the index. It warns when
// the file is not the committed requirements.txt.ocp: such images are not the ones a release builds.
func (e Env) Download(ctx context.Context, pip Pip, progress io.Writer) error {
	if e.Replaced {
		fmt.Fprintf(progress, "wheels: WARNING: WHEELS_REQUIREMENTS=%s replaces the committed requirements.txt.ocp: the Python packages (and the images built from them) are not what a release ships\n", e.Requirements)
	}
	_, reqs, err := e.requirements()
	if err != nil || len(reqs) == 0 {
		return err
	}
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return err
	}
	// --no-build-isolation: pip reads an sdist's metadata with the setuptools already installed, never one it
	// would download.
	args := []string{"download", "--require-hashes", "--no-deps", "--no-build-isolation", "--dest", e.Dir, "-r", e.Requirements}
	out, err := pip.Run(ctx, append(args, "--no-index", "--find-links", e.Dir)...)
	if err != nil {
		if out, err = pip.Run(ctx, append(args, "--index-url", e.IndexURL)...); err != nil {
			return fmt.Errorf("wheels: downloading the pins of %s from %s: %w", e.Requirements, e.IndexURL, err)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "Saved ") || strings.HasPrefix(line, "File was already downloaded ") {
			fmt.Fprintf(progress, "wheels: %s (hash verified)\n", line)
		}
	}
	return nil
}
