package wheels

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Install installs wheels into dir, which becomes a site-packages directory of Python 3.<minor>: pip install
// --target dir --python-version 3.<minor> --no-index --no-deps --no-compile, naming each wheel by name==version
// with --find-links, so pip records no file:// origin (direct_url.json) that would differ from one build to the
// next. dir is emptied first. A wheel with console scripts or data files is refused: pip would write them under
// dir with the build host's interpreter in the shebang, which the image does not have.
func Install(ctx context.Context, pip Pip, wheels []string, minor int, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	args := []string{"install", "--no-index", "--no-deps", "--no-compile", "--only-binary", ":all:",
		"--target", dir, "--python-version", fmt.Sprintf("3.%d", minor)}
	var links []string
	for _, w := range wheels {
		if d := filepath.Dir(w); !slices.Contains(links, d) {
			links = append(links, d)
			args = append(args, "--find-links", d)
		}
	}
	for _, w := range wheels {
		name, version := WheelPin(w)
		args = append(args, name+"=="+version)
	}
	if _, err := pip.Run(ctx, args...); err != nil {
		return fmt.Errorf("wheels: installing %d wheels for Python 3.%d: %w", len(wheels), minor, err)
	}
	for _, outside := range []string{"bin", "share", "include"} {
		if _, err := os.Stat(filepath.Join(dir, outside)); err == nil {
			return fmt.Errorf("wheels: a wheel installs %s/ (console scripts or data files) besides its packages: only packages go into the image's site-packages", outside)
		}
	}
	return nil
}
