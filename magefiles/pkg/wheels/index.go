package wheels

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// Dist is one distribution file listed on a project's simple index page.
type Dist struct {
	Filename string
	URL      string
	// SHA256 is the hash the index advertises (PEP 691 "hashes", or the PEP 503 URL fragment), or "" when it
	// gives none.
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

// Sdist reports whether the file is a source distribution (name-version.tar.gz or .zip).
func (f File) Sdist() bool { return !f.Wheel }

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

// NewClient is the HTTP client of the index: it gives up on a server that does not connect within 30 seconds or
// answer within a minute, and on any single request after 10 minutes, instead of hanging a build.
func NewClient() *http.Client {
	return &http.Client{
		Timeout: 10 * time.Minute,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: time.Minute,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		},
	}
}

// The media types of the simple repository API: JSON (PEP 691) first, HTML (PEP 503) for older indexes.
const (
	jsonType = "application/vnd.pypi.simple.v1+json"
	htmlType = "application/vnd.pypi.simple.v1+html"
)

// Links fetches the project page of the simple index at indexURL and returns every file it lists. It asks for the
// JSON form (PEP 691) and reads the HTML form (PEP 503) when that is what the index serves.
func Links(ctx context.Context, client HTTPClient, indexURL, project string) ([]Dist, error) {
	base, err := url.Parse(strings.TrimSuffix(indexURL, "/") + "/" + Normalize(project) + "/")
	if err != nil {
		return nil, fmt.Errorf("index URL %q: %w", indexURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", jsonType+", "+htmlType+";q=0.2, text/html;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the index page of %s: %w (set WHEELS_INDEX_URL to a reachable PEP 503/691 index)", project, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the index page of %s: GET %s: %s", project, base, resp.Status)
	}
	body := io.LimitReader(resp.Body, 64<<20)
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType == jsonType {
		return parseJSON(base, body)
	}
	return parseHTML(base, body)
}

// parseJSON reads a PEP 691 project page.
func parseJSON(base *url.URL, body io.Reader) ([]Dist, error) {
	var page struct {
		Files []struct {
			Filename string            `json:"filename"`
			URL      string            `json:"url"`
			Hashes   map[string]string `json:"hashes"`
		} `json:"files"`
	}
	if err := json.NewDecoder(body).Decode(&page); err != nil {
		return nil, fmt.Errorf("index page %s: not a PEP 691 JSON page: %w", base, err)
	}
	out := make([]Dist, 0, len(page.Files))
	for _, f := range page.Files {
		u, err := base.Parse(f.URL)
		if err != nil {
			return nil, fmt.Errorf("index page %s: file %s: url %q: %w", base, f.Filename, f.URL, err)
		}
		u.Fragment = ""
		out = append(out, Dist{Filename: f.Filename, URL: u.String(), SHA256: strings.ToLower(f.Hashes["sha256"])})
	}
	return out, nil
}

// parseHTML reads the anchors of a PEP 503 project page; the file name is the anchor's text and the hash the
// URL's #sha256= fragment.
func parseHTML(base *url.URL, body io.Reader) ([]Dist, error) {
	var out []Dist
	z := html.NewTokenizer(body)
	open := -1 // the index in out of the anchor being read
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return out, nil
			}
			return nil, fmt.Errorf("index page %s: %w", base, z.Err())
		case html.StartTagToken:
			tok := z.Token()
			if tok.Data != "a" {
				continue
			}
			for _, a := range tok.Attr {
				if a.Key != "href" {
					continue
				}
				u, err := base.Parse(a.Val)
				if err != nil {
					return nil, fmt.Errorf("index page %s: link %q: %w", base, a.Val, err)
				}
				d := Dist{}
				if algo, digest, ok := strings.Cut(u.Fragment, "="); ok && algo == "sha256" {
					d.SHA256 = strings.ToLower(digest)
				}
				u.Fragment = ""
				d.URL = u.String()
				out = append(out, d)
				open = len(out) - 1
			}
		case html.TextToken:
			if open >= 0 {
				out[open].Filename += string(z.Text())
			}
		case html.EndTagToken:
			if open >= 0 && z.Token().Data == "a" {
				d := &out[open]
				d.Filename = strings.TrimSpace(d.Filename)
				if d.Filename == "" {
					u, _ := url.Parse(d.URL)
					d.Filename = u.Path[strings.LastIndex(u.Path, "/")+1:]
				}
				open = -1
			}
		}
	}
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
