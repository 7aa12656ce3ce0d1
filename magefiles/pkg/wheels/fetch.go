package wheels

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/progress"
)

// DefaultIndexURL is the public PyPI simple index.
const DefaultIndexURL = "https://pypi.org/simple"

// Options says where distributions come from and go.
type Options struct {
	// IndexURL is the PEP 503/691 simple index (DefaultIndexURL when empty).
	IndexURL string
	// Client makes the HTTP requests; nil means NewClient().
	Client HTTPClient
	// Dir receives the verified files (_output/wheels).
	Dir string
	// Progress receives one line per requirement.
	Progress io.Writer
}

// Verified is a distribution file on disk, a pure-Python wheel or a source distribution, whose sha256 is one of
// its requirement's pinned hashes.
type Verified struct {
	Requirement Requirement
	Path        string
	SHA256      string
	// Sdist is true for a source distribution, which is built into a wheel before it is installed (pybuild).
	Sdist bool
}

// HTTPClient is the part of *http.Client the index client uses.
type HTTPClient interface {
	Do(*http.Request) (*http.Response, error)
}

func (o Options) client() HTTPClient {
	if o.Client != nil {
		return o.Client
	}
	return NewClient()
}

func (o Options) indexURL() string {
	if o.IndexURL != "" {
		return o.IndexURL
	}
	return DefaultIndexURL
}

// Fetch makes sure Dir holds, for every requirement, a file whose sha256 is one of the pinned hashes: a
// pure-Python wheel when one is pinned, else the source distribution. It downloads only what is not there yet;
// the result follows the order of reqs. A download whose hash matches no pinned hash is deleted and fails the
// fetch.
func Fetch(ctx context.Context, reqs []Requirement, opts Options) ([]Verified, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	report := progress.New(opts.Progress)
	out := make([]Verified, len(reqs))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, r := range reqs {
		g.Go(func() error {
			v, fetched, err := fetchOne(ctx, r, opts)
			if err != nil {
				return err
			}
			out[i] = v
			state := "already verified"
			if fetched {
				state = "downloaded and verified"
			}
			report.Printf("wheels: %s: %s %s (sha256:%s)", r, filepath.Base(v.Path), state, v.SHA256[:12])
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// Local returns the verified file of every requirement from Dir, without any network access; a missing or
// unverifiable file is an error telling to run the wheels target.
func Local(reqs []Requirement, dir string) ([]Verified, error) {
	out := make([]Verified, 0, len(reqs))
	for _, r := range reqs {
		v, ok, err := findLocal(r, dir)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s (line %d): no file with a pinned hash in %s: run `go tool mage wheels`", r, r.Line, dir)
		}
		out = append(out, v)
	}
	return out, nil
}

func fetchOne(ctx context.Context, r Requirement, opts Options) (Verified, bool, error) {
	if v, ok, err := findLocal(r, opts.Dir); err != nil || ok {
		return v, false, err
	}
	dists, err := Links(ctx, opts.client(), opts.indexURL(), r.Name)
	if err != nil {
		return Verified{}, false, err
	}
	candidates := versionFiles(dists, r)
	if len(candidates) == 0 {
		return Verified{}, false, fmt.Errorf("%s (line %d): the index lists no file of version %s", r, r.Line, r.Version)
	}
	// Pure wheels first (py3-none-any before py2.py3-none-any), then source distributions; platform wheels never.
	sort.SliceStable(candidates, func(a, b int) bool { return rank(candidates[a]) < rank(candidates[b]) })
	var lastErr error
	for _, d := range candidates {
		if rank(d) > 2 {
			break
		}
		if d.SHA256 != "" && !slices.Contains(r.Hashes, d.SHA256) {
			continue // the index says this file is not one we pinned
		}
		v, err := download(ctx, opts.client(), r, d, opts.Dir)
		if err == nil {
			return v, true, nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return Verified{}, false, lastErr
	}
	return Verified{}, false, fmt.Errorf("%s (line %d): none of the %d files the index lists for this version is a pure-Python wheel or a source distribution with a pinned hash", r, r.Line, len(candidates))
}

// rank orders candidate files: 0 py3-none-any wheels, 1 other pure wheels, 2 sdists, 3 platform wheels.
func rank(d Dist) int {
	f, _ := ParseFilename(d.Filename)
	switch {
	case f.Pure() && f.Tags == "py3-none-any":
		return 0
	case f.Pure():
		return 1
	case f.Sdist():
		return 2
	}
	return 3
}

// findLocal looks in dir for a pure wheel or an sdist of r whose content hashes to a pinned hash, wheels first.
func findLocal(r Requirement, dir string) (Verified, bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return Verified{}, false, nil
		}
		return Verified{}, false, err
	}
	var found []Verified
	for _, e := range entries {
		f, err := ParseFilename(e.Name())
		if err != nil || !e.Type().IsRegular() || !(f.Pure() || f.Sdist()) || f.Project != r.Normalized() || f.Version != r.Version {
			continue
		}
		p := filepath.Join(dir, e.Name())
		sum, err := fileSHA256(p)
		if err != nil {
			return Verified{}, false, err
		}
		if slices.Contains(r.Hashes, sum) {
			found = append(found, Verified{Requirement: r, Path: p, SHA256: sum, Sdist: f.Sdist()})
		}
	}
	if len(found) == 0 {
		return Verified{}, false, nil
	}
	sort.SliceStable(found, func(a, b int) bool { return !found[a].Sdist && found[b].Sdist })
	return found[0], true, nil
}

// download streams one file to a temporary name in dir, checks its sha256 against the pins and only then gives it
// its real name.
func download(ctx context.Context, client HTTPClient, r Requirement, d Dist, dir string) (Verified, error) {
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return Verified{}, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sum, err := get(ctx, client, d.URL, tmp)
	if err != nil {
		return Verified{}, fmt.Errorf("%s: downloading %s: %w", r, d.Filename, err)
	}
	if !slices.Contains(r.Hashes, sum) {
		return Verified{}, fmt.Errorf("%s (line %d): %s has sha256 %s, which is not among the pinned hashes %v: refusing it", r, r.Line, d.Filename, sum, r.Hashes)
	}
	if err := tmp.Close(); err != nil {
		return Verified{}, err
	}
	dest := filepath.Join(dir, filepath.Base(d.Filename))
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return Verified{}, err
	}
	f, _ := ParseFilename(d.Filename)
	return Verified{Requirement: r, Path: dest, SHA256: sum, Sdist: f.Sdist()}, nil
}

// get copies the body of url into w and returns its hex sha256.
func get(ctx context.Context, client HTTPClient, url string, w io.Writer) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, h), resp.Body); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
