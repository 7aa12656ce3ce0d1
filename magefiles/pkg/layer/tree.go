package layer

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Tree lists the files, directories and symlinks below dir (not dir itself) as entries below dest, reading file
// contents from disk when the layer is built. Modes are normalised, so that the layer does not depend on the
// umask or the tool that wrote the tree: 0755 for directories and executable files, 0644 for other files.
func Tree(dir, dest string) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		e := Entry{Path: path.Join(dest, filepath.ToSlash(rel)), Mode: 0o644}
		switch t := d.Type(); {
		case t.IsDir():
			e.Kind, e.Mode = Dir, 0o755
		case t&fs.ModeSymlink != 0:
			e.Kind = Symlink
			if e.Link, err = os.Readlink(p); err != nil {
				return err
			}
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Mode()&0o111 != 0 {
				e.Mode = 0o755
			}
			e.Kind, e.Source = File, p
		default:
			return fmt.Errorf("%s: a %s, want files, directories and symlinks only", p, t)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}
