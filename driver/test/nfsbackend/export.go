package nfsbackend

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// AccessPoint is what the backend needs to know of an access point.
type AccessPoint struct {
	ID, FileSystemID string
	// RootDir is the access point's root directory, absolute ("/" for the file system root).
	RootDir string
	// Creation, when set, is how a missing root directory is created; nil makes a mount fail when it is missing.
	Creation *CreationInfo
}

// CreationInfo is an access point's CreationInfo: owner and permissions of a root directory EFS creates.
type CreationInfo struct {
	UID, GID uint32
	// Permissions are the Unix mode bits (0o7777), as in the EFS API's octal string.
	Permissions uint32
}

// fileMode converts Unix mode bits to Go's fs.FileMode.
func fileMode(unix uint32) fs.FileMode {
	m := fs.FileMode(unix & 0o777)
	for bit, mode := range map[uint32]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if unix&bit != 0 {
			m |= mode
		}
	}
	return m
}

// ErrNoExport is wrapped when the directory a mount asks for does not exist (mount.nfs4 reports ENOENT).
var ErrNoExport = errors.New("no such file or directory")

// servedPath is the directory a mount of export serves, relative to the file system root: export below the
// access point's root (or the file system root). export cannot climb out of the root: it is cleaned as an
// absolute path first.
func servedPath(ap *AccessPoint, export string) string {
	root := "/"
	if ap != nil && ap.RootDir != "" {
		root = ap.RootDir
	}
	return path.Join(root, path.Clean("/"+export))
}

// openExport opens the directory to serve in the file system's backing directory fsRoot. With an access point
// whose root directory is missing it first creates it, as EFS does on the first mount: every missing directory
// of the path gets the CreationInfo owner and permissions (EFS documents this for the root directory; what it
// does for missing parents is not documented, and this stand-in treats them alike). Paths are resolved inside
// fsRoot (os.Root), so a symbolic link in the backing store cannot lead outside it.
func openExport(fsRoot string, ap *AccessPoint, export string) (*os.File, string, error) {
	root, err := os.OpenRoot(fsRoot)
	if err != nil {
		return nil, "", fmt.Errorf("open backing directory: %w", err)
	}
	defer root.Close()
	if ap != nil && ap.RootDir != "" && ap.RootDir != "/" {
		if err := ensureRootDir(root, ap); err != nil {
			return nil, "", err
		}
	}
	served := servedPath(ap, export)
	rel := strings.TrimPrefix(served, "/")
	if rel == "" {
		rel = "."
	}
	f, err := root.Open(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, served, fmt.Errorf("%s: %w", served, ErrNoExport)
	}
	if err != nil {
		return nil, served, fmt.Errorf("open %s: %w", served, err)
	}
	st, err := f.Stat()
	if err != nil || !st.IsDir() {
		_ = f.Close()
		return nil, served, fmt.Errorf("%s is not a directory", served)
	}
	return f, served, nil
}

// ensureRootDir creates the missing directories of the access point's root directory with its CreationInfo.
func ensureRootDir(root *os.Root, ap *AccessPoint) error {
	rel := strings.TrimPrefix(path.Clean(ap.RootDir), "/")
	if _, err := root.Stat(rel); err == nil {
		return nil
	}
	if ap.Creation == nil {
		return fmt.Errorf("access point %s: root directory %s does not exist and the access point has no CreationInfo: %w",
			ap.ID, ap.RootDir, ErrNoExport)
	}
	c := ap.Creation
	dir := ""
	for _, elem := range strings.Split(rel, "/") {
		dir = path.Join(dir, elem)
		err := root.Mkdir(dir, fileMode(c.Permissions).Perm())
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("access point %s: create %s: %w", ap.ID, "/"+dir, err)
		}
		// Mkdir's mode is cut by the umask; EFS applies the permissions as given
		if err := root.Chmod(dir, fileMode(c.Permissions)); err != nil {
			return fmt.Errorf("access point %s: chmod %s: %w", ap.ID, "/"+dir, err)
		}
		if err := root.Lchown(dir, int(c.UID), int(c.GID)); err != nil {
			return fmt.Errorf("access point %s: chown %s: %w", ap.ID, "/"+dir, err)
		}
	}
	return nil
}
