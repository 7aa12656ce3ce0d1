package wheels

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultIndexURL is the public PyPI simple index.
const DefaultIndexURL = "https://pypi.org/simple"

// Env is where the wheels targets read and write, from their environment variables.
type Env struct {
	// Requirements is WHEELS_REQUIREMENTS, default <root>/requirements.txt.ocp; Replaced is true when
	// WHEELS_REQUIREMENTS named another file.
	Requirements string
	Replaced     bool
	// IndexURL is WHEELS_INDEX_URL, default DefaultIndexURL.
	IndexURL string
	// Dir keeps the verified downloads (<root>/_output/wheels); BuiltDir the wheels built from them, one
	// directory per requirements file content (<root>/_output/wheels/built).
	Dir      string
	BuiltDir string
}

// ReadEnv resolves the wheels settings for the repository at root.
func ReadEnv(root string, getenv func(string) string) Env {
	dir := filepath.Join(root, "_output", "wheels")
	e := Env{Requirements: getenv("WHEELS_REQUIREMENTS"), IndexURL: getenv("WHEELS_INDEX_URL"), Dir: dir, BuiltDir: filepath.Join(dir, "built")}
	if e.Requirements == "" {
		e.Requirements = filepath.Join(root, "requirements.txt.ocp")
	}
	e.Replaced = e.Requirements != filepath.Join(root, "requirements.txt.ocp")
	if e.IndexURL == "" {
		e.IndexURL = DefaultIndexURL
	}
	return e
}

// requirements makes the paths of e absolute (pip runs in a directory of its own), reads the file and parses it strictly (ParseRequirements) before pip sees it: pip
// would follow an --index-url line or a URL requirement in the file, which an image build must never do.
func (e *Env) requirements() (string, []Requirement, error) {
	for _, p := range []*string{&e.Requirements, &e.Dir, &e.BuiltDir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return "", nil, err
		}
		*p = abs
	}
	data, err := os.ReadFile(e.Requirements)
	if err != nil {
		return "", nil, fmt.Errorf("reading the Python requirements (WHEELS_REQUIREMENTS): %w", err)
	}
	reqs, err := ParseRequirements(e.Requirements, string(data))
	return string(data), reqs, err
}
