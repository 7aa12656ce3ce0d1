package wheels

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Env is where the wheels targets read and write, from their environment variables.
type Env struct {
	// Requirements is WHEELS_REQUIREMENTS, default <root>/requirements.txt.ocp; Replaced is true when
	// WHEELS_REQUIREMENTS named another file.
	Requirements string
	Replaced     bool
	// IndexURL is WHEELS_INDEX_URL, default DefaultIndexURL.
	IndexURL string
	// Dir is where verified files are kept: <root>/_output/wheels.
	Dir string
}

// ReadEnv resolves the wheels settings for the repository at root.
func ReadEnv(root string, getenv func(string) string) Env {
	e := Env{Requirements: getenv("WHEELS_REQUIREMENTS"), IndexURL: getenv("WHEELS_INDEX_URL"), Dir: filepath.Join(root, "_output", "wheels")}
	if e.Requirements == "" {
		e.Requirements = filepath.Join(root, "requirements.txt.ocp")
	}
	e.Replaced = e.Requirements != filepath.Join(root, "requirements.txt.ocp")
	if e.IndexURL == "" {
		e.IndexURL = DefaultIndexURL
	}
	return e
}

// Requirements reads and parses the requirements file.
func (e Env) requirements() ([]Requirement, error) {
	data, err := os.ReadFile(e.Requirements)
	if err != nil {
		return nil, fmt.Errorf("reading the Python requirements (WHEELS_REQUIREMENTS): %w", err)
	}
	return ParseRequirements(e.Requirements, string(data))
}

// FetchAll makes Dir hold a verified wheel or sdist for every requirement of the file (see Fetch). It warns when
// the file is not the committed requirements.txt.ocp: such images are not the ones a release builds.
func (e Env) FetchAll(ctx context.Context, client HTTPClient, progress io.Writer) ([]Verified, error) {
	if e.Replaced {
		fmt.Fprintf(progress, "wheels: WARNING: WHEELS_REQUIREMENTS=%s replaces the committed requirements.txt.ocp: the Python packages (and the images built from them) are not what a release ships\n", e.Requirements)
	}
	reqs, err := e.requirements()
	if err != nil {
		return nil, err
	}
	return Fetch(ctx, reqs, Options{IndexURL: e.IndexURL, Client: client, Dir: e.Dir, Progress: progress})
}

// LocalAll returns the verified file of every requirement from Dir, without network access.
func (e Env) LocalAll() ([]Verified, error) {
	reqs, err := e.requirements()
	if err != nil {
		return nil, err
	}
	return Local(reqs, e.Dir)
}

// LockFile recomputes the hashes in the requirements file from the index and rewrites the file when they
// changed (see Lock).
func (e Env) LockFile(ctx context.Context, client HTTPClient, progress io.Writer) error {
	data, err := os.ReadFile(e.Requirements)
	if err != nil {
		return fmt.Errorf("reading the Python requirements (WHEELS_REQUIREMENTS): %w", err)
	}
	locked, err := Lock(ctx, e.Requirements, string(data), Options{IndexURL: e.IndexURL, Client: client, Progress: progress})
	if err != nil {
		return err
	}
	if locked == string(data) {
		fmt.Fprintf(progress, "wheels:lock: %s is up to date\n", e.Requirements)
		return nil
	}
	tmp := e.Requirements + ".lock-partial"
	if err := os.WriteFile(tmp, []byte(locked), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "wheels:lock: wrote new hashes to %s\n", e.Requirements)
	return os.Rename(tmp, e.Requirements)
}
