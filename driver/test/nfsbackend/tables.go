package nfsbackend

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"k8s.io/klog/v2"
)

// tableID identifies a mount table file by its directory (device and inode) and name, so that a table on a host
// directory shared by several containers (the node pod's /var/run/efs, which outlives a node plugin restart) is
// one table whichever namespace wrote it.
type tableID struct {
	dev, ino uint64
	name     string
}

// table is one NFS mount table the backend keeps for the processes that read it.
type table struct {
	path    string // in the readers' namespace
	nsIno   uint64 // a mount namespace whose processes read it
	pid     int    // a process in that namespace (a hint; looked up again when it is gone)
	entries []Entry
	written string
}

// tables keeps every NFS mount table the backend was told about current: an entry leaves its table once its
// target is no longer a mount point in the readers' namespace, as the kernel drops an unmounted NFS mount from
// /proc/mounts.
type tables struct {
	mu sync.Mutex
	m  map[tableID]*table
}

func newTables() *tables { return &tables{m: map[tableID]*table{}} }

// identify returns the ID of the table at path in pid's root, creating its directory when missing.
func identify(pid int, path string) (tableID, error) {
	if err := mkdirAllInRoot(pid, filepath.Dir(path)); err != nil {
		return tableID{}, err
	}
	st, err := statInRoot(pid, filepath.Dir(path))
	if err != nil {
		return tableID{}, err
	}
	return tableID{dev: st.Dev, ino: st.Ino, name: filepath.Base(path)}, nil
}

// add records an entry in the table at path of pid's namespace and writes the table.
func (ts *tables) add(pid int, nsIno uint64, path string, e Entry) error {
	id, err := identify(pid, path)
	if err != nil {
		return fmt.Errorf("mount table %s: %w", path, err)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[id]
	if t == nil {
		t = &table{path: path}
		// keep what an earlier backend wrote, as far as it is still mounted (sync drops the rest)
		if b, err := readInRoot(pid, path); err == nil {
			t.entries = ParseTable(string(b))
		}
		ts.m[id] = t
	}
	t.path, t.nsIno, t.pid = path, nsIno, pid
	t.entries = append(t.entries, e)
	return ts.syncLocked(id, t)
}

// sync brings every table up to date.
func (ts *tables) sync() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for id, t := range ts.m {
		if err := ts.syncLocked(id, t); err != nil {
			klog.V(2).InfoS("Mount table not updated", "path", t.path, "err", err)
		}
	}
}

// syncLocked rewrites t from the mount points of a reader's namespace. When no process is left in the namespace
// that wrote it, another namespace that sees the same table file takes over (a restarted node container).
func (ts *tables) syncLocked(id tableID, t *table) error {
	pid, err := findNamespaceMember(t.nsIno, t.pid)
	if err != nil {
		if pid, err = findReader(id, t.path); err != nil {
			return err
		}
		ino, err := nsInode(strconv.Itoa(pid))
		if err != nil {
			return err
		}
		klog.InfoS("Mount table taken over by another mount namespace", "path", t.path, "from", t.nsIno, "to", ino, "pid", pid)
		t.nsIno = ino
	}
	t.pid = pid
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		return err
	}
	t.entries = Live(t.entries, MountPoints(string(info)))
	text := Format(t.entries)
	if text == t.written {
		return nil
	}
	// write and rename: a reader never sees a half-written table (the watchdog would take a mount it misses for
	// unmounted and stop its relay after the grace period)
	if err := replaceInRoot(pid, t.path, []byte(text)); err != nil {
		return err
	}
	t.written = text
	return nil
}

// findReader finds a process that sees the table id at path.
func findReader(id tableID, path string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := statInRoot(pid, filepath.Dir(path)); err == nil && st.Dev == id.dev && st.Ino == id.ino {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process sees mount table %s any more", path)
}
