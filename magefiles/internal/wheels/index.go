package wheels

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Dist is one distribution file listed on a project's simple index page.
type Dist struct {
	Filename string
	URL      string
	// SHA256 is the hash the index advertises in the URL fragment, or "" when it gives none.
	SHA256 string
}

// File is what a distribution file name says about itself.
type File struct {
	// Project is the normalized project name.
	Project string
	Version string
	// Wheel is true for .whl files; Tags holds the python-abi-platform tags of a wheel.
	Wheel bool
	Tags  string
}

// Pure reports whether a wheel installs on any Python 3 on any platform: an abi of "none" and a platform of "any".
func (f File) Pure() bool {
	if !f.Wheel {
		return false
	}
	parts := strings.Split(f.Tags, "-")
	return len(parts) == 3 && parts[1] == "none" && parts[2] == "any" && strings.Contains(parts[0], "py3")
}

var wheelName = regexp.MustCompile(`^([A-Za-z0-9_.]+)-([A-Za-z0-9_.!+]+)(-[0-9][A-Za-z0-9_.]*)?-([A-Za-z0-9_.]+-[A-Za-z0-9_.]+-[A-Za-z0-9_.]+)\.whl$`)

// ParseFilename reads a wheel (name-version[-build]-python-abi-platform.whl, PEP 427) or an sdist
// (name-version.tar.gz or .zip) file name.
func ParseFilename(name string) (File, error) {
	if m := wheelName.FindStringSubmatch(name); m != nil {
		return File{Project: Normalize(m[1]), Version: m[2], Wheel: true, Tags: m[4]}, nil
	}
	for _, ext := range []string{".tar.gz", ".zip"} {
		stem, ok := strings.CutSuffix(name, ext)
		if !ok {
			continue
		}
		i := strings.LastIndex(stem, "-")
		if i <= 0 || i == len(stem)-1 {
			break
		}
		return File{Project: Normalize(stem[:i]), Version: stem[i+1:]}, nil
	}
	return File{}, fmt.Errorf("distribution file name %q: want name-version-python-abi-platform.whl or name-version.tar.gz", name)
}

var anchor = regexp.MustCompile(`(?is)<a\s([^>]*)>(.*?)</a>`)
var hrefAttr = regexp.MustCompile(`(?is)\bhref\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))`)

// Links fetches the PEP 503 page of a project from the simple index at indexURL and returns every file it lists.
func Links(ctx context.Context, client HTTPClient, indexURL, project string) ([]Dist, error) {
	base, err := url.Parse(strings.TrimSuffix(indexURL, "/") + "/" + Normalize(project) + "/")
	if err != nil {
		return nil, fmt.Errorf("index URL %q: %w", indexURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.pypi.simple.v1+html, text/html;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the index page of %s: %w (set WHEELS_INDEX_URL to a reachable PEP 503 index)", project, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the index page of %s: GET %s: %s", project, base, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the index page of %s: %w", project, err)
	}
	return parsePage(base, string(body))
}

// parsePage extracts the anchors of a simple index page; relative links resolve against the page's URL.
func parsePage(base *url.URL, body string) ([]Dist, error) {
	var out []Dist
	for _, m := range anchor.FindAllStringSubmatch(body, -1) {
		h := hrefAttr.FindStringSubmatch(m[1])
		if h == nil {
			continue
		}
		raw := html.UnescapeString(h[2] + h[3] + h[4])
		u, err := base.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("index page %s: link %q: %w", base, raw, err)
		}
		d := Dist{Filename: strings.TrimSpace(html.UnescapeString(m[2]))}
		if algo, digest, ok := strings.Cut(u.Fragment, "="); ok && algo == "sha256" {
			d.SHA256 = strings.ToLower(digest)
		}
		u.Fragment = ""
		d.URL = u.String()
		if d.Filename == "" {
			d.Filename = pathBase(u.Path)
		}
		out = append(out, d)
	}
	return out, nil
}

func pathBase(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// versionFiles returns the files of the pinned project and version, in page order.
func versionFiles(dists []Dist, r Requirement) []Dist {
	var out []Dist
	for _, d := range dists {
		f, err := ParseFilename(d.Filename)
		if err == nil && f.Project == r.Normalized() && f.Version == r.Version {
			out = append(out, d)
		}
	}
	return out
}
