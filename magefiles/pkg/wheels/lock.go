package wheels

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Lock recomputes the hashes of every pinned requirement in content: it downloads each file the index lists for
// the pinned version, hashes it, and returns the file with each requirement's hashes replaced by those, keeping
// every other line as it was. A file whose download disagrees with the hash the index advertises is an error.
func Lock(ctx context.Context, file, content string, opts Options) (string, error) {
	reqs, err := parseForLock(file, content)
	if err != nil {
		return "", err
	}
	lines := strings.Split(content, "\n")
	var out []string
	next := 0
	for _, r := range reqs {
		hashes, err := versionHashes(ctx, r, opts)
		if err != nil {
			return "", err
		}
		r.Hashes = hashes
		out = append(out, lines[next:r.Line-1]...)
		out = append(out, strings.Split(r.Format(), "\n")...)
		next = r.LastLine
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "wheels:lock: %s: %d files hashed\n", r, len(hashes))
		}
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n"), nil
}

// parseForLock accepts pinned requirements that have no hash yet, which is what lock is for.
func parseForLock(file, content string) ([]Requirement, error) {
	const placeholder = " --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000"
	lines := strings.Split(content, "\n")
	patched := make([]string, len(lines))
	for i, l := range lines {
		patched[i] = l
		text := strings.TrimSpace(stripComment(l))
		if text != "" && !strings.HasPrefix(text, "-") && !strings.Contains(text, "--hash") && !strings.HasSuffix(text, `\`) &&
			(i == 0 || !strings.HasSuffix(strings.TrimSpace(stripComment(lines[i-1])), `\`)) {
			idx := commentIndex(l)
			if idx < 0 {
				idx = len(l)
			}
			patched[i] = strings.TrimRight(l[:idx], " \t") + placeholder + " " + l[idx:]
		}
	}
	return ParseRequirements(file, strings.Join(patched, "\n"))
}

// versionHashes downloads every file of r's version and returns their sorted sha256 digests.
func versionHashes(ctx context.Context, r Requirement, opts Options) ([]string, error) {
	dists, err := Links(ctx, opts.client(), opts.indexURL(), r.Name)
	if err != nil {
		return nil, err
	}
	files := versionFiles(dists, r)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s (line %d): the index lists no file of version %s", r, r.Line, r.Version)
	}
	var hashes []string
	for _, d := range files {
		sum, err := get(ctx, opts.client(), d.URL, io.Discard)
		if err != nil {
			return nil, fmt.Errorf("%s: downloading %s: %w", r, d.Filename, err)
		}
		if d.SHA256 != "" && d.SHA256 != sum {
			return nil, fmt.Errorf("%s: %s hashes to sha256:%s but the index advertises sha256:%s: refusing to lock", r, d.Filename, sum, d.SHA256)
		}
		hashes = append(hashes, sum)
	}
	sort.Strings(hashes)
	return slices.Compact(hashes), nil
}
