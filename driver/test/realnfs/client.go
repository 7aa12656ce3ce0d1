package realnfs

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"path"
	"strconv"
	"strings"
)

// ListCommand is libnfs' directory lister (package libnfs-utils).
const ListCommand = "nfs-ls"

// Entry is one line of a listing.
type Entry struct {
	Name string
	Dir  bool
}

// URL is the libnfs URL of path on the NFSv4 server at host:port. libnfs 4.0 takes the port as the nfsport
// argument (host:port is refused) and needs version=4, without which it asks rpcbind for an NFSv3 server.
func URL(host string, port int, p string) string {
	u := url.URL{Scheme: "nfs", Host: host, Path: path.Clean("/" + p),
		RawQuery: "version=4&nfsport=" + strconv.Itoa(port)}
	return u.String()
}

// List lists the directory p of the NFSv4 server at host:port with nfs-ls: a real NFS client session (EXCHANGE_ID,
// CREATE_SESSION, LOOKUP, READDIR) over one TCP connection.
func List(ctx context.Context, host string, port int, p string) ([]Entry, error) {
	bin, err := exec.LookPath(ListCommand)
	if err != nil {
		return nil, fmt.Errorf("realnfs: install Debian's libnfs-utils: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, URL(host, port, p))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("realnfs: %s %s: %v: %s", ListCommand, URL(host, port, p), err, strings.TrimSpace(stderr.String()+stdout.String()))
	}
	return parseListing(stdout.String())
}

// parseListing reads nfs-ls' output: one line per entry, "MODE NLINK UID GID SIZE NAME" (as ls -l without the
// date), "." and ".." included.
func parseListing(out string) ([]Entry, error) {
	var entries []Entry
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 6 || len(fields[0]) != 10 {
			return nil, fmt.Errorf("realnfs: %s printed %q: want MODE NLINK UID GID SIZE NAME", ListCommand, line)
		}
		// the name is the rest of the line after the fifth field, spaces and all
		rest := line
		for range 5 {
			rest = strings.TrimLeft(rest, " ")
			rest = rest[strings.IndexByte(rest, ' '):]
		}
		name := strings.TrimLeft(rest, " ")
		if name == "." || name == ".." {
			continue
		}
		entries = append(entries, Entry{Name: name, Dir: fields[0][0] == 'd'})
	}
	return entries, nil
}
