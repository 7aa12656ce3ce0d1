package imagebuild

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/toolchain"
)

// Settings are the images target's environment variables, parsed.
type Settings struct {
	// From maps image names to a base reference given in the image's FromEnv variable.
	From map[string]string
	// Registry, Tag, Release and Insecure come from REGISTRY, IMAGE_TAG, RELEASE and REGISTRY_INSECURE.
	Registry string
	Tag      string
	Release  string
	Insecure bool
	// MTime is SOURCE_DATE_EPOCH when set; zero means "use the commit time".
	MTime time.Time
	// Jobs is IMAGE_JOBS, default the number of CPUs.
	Jobs int
}

// ParseEnv reads the images target's environment through getenv and checks every value.
func ParseEnv(getenv func(string) string, specs []Spec) (Settings, error) {
	s := Settings{From: map[string]string{}, Registry: strings.TrimSuffix(getenv("REGISTRY"), "/"), Tag: getenv("IMAGE_TAG"), Release: getenv("RELEASE"), Jobs: runtime.NumCPU()}
	for _, spec := range specs {
		if v := strings.TrimSpace(getenv(spec.FromEnv)); v != "" {
			s.From[spec.Name] = v
		}
	}
	if v := getenv("REGISTRY_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Settings{}, fmt.Errorf("REGISTRY_INSECURE %q: want true or false", v)
		}
		s.Insecure = b
	}
	if v := getenv("SOURCE_DATE_EPOCH"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return Settings{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970-01-01 UTC, e.g. 1767225600", v)
		}
		s.MTime = time.Unix(n, 0).UTC()
	}
	if v := getenv("IMAGE_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Settings{}, fmt.Errorf("IMAGE_JOBS %q: want a positive integer, e.g. 2", v)
		}
		s.Jobs = n
	}
	if s.Tag != "" && !validTag(s.Tag) {
		return Settings{}, fmt.Errorf("IMAGE_TAG %q: want 1 to 128 of [A-Za-z0-9_.-], not starting with '.' or '-'", s.Tag)
	}
	return s, nil
}

func validTag(t string) bool {
	if len(t) == 0 || len(t) > 128 || t[0] == '.' || t[0] == '-' {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// WithBases returns specs with the bases of s.From applied.
func (s Settings) WithBases(specs []Spec) []Spec {
	out := append([]Spec(nil), specs...)
	for i := range out {
		if v, ok := s.From[out[i].Name]; ok {
			out[i].From = v
		}
	}
	return out
}

// ReadEnv parses the images settings (ParseEnv) and PLATFORMS from getenv; when SOURCE_DATE_EPOCH is unset, the
// layers are dated by the commit time of HEAD in repoRoot. The images, bundle and catalog targets share it.
func ReadEnv(ctx context.Context, repoRoot string, getenv func(string) string, specs []Spec) (Settings, []platform.Platform, error) {
	settings, err := ParseEnv(getenv, specs)
	if err != nil {
		return Settings{}, nil, err
	}
	platforms, err := platform.Parse(getenv("PLATFORMS"))
	if err != nil {
		return Settings{}, nil, err
	}
	if settings.MTime.IsZero() {
		if settings.MTime, err = CommitTime(ctx, repoRoot); err != nil {
			return Settings{}, nil, err
		}
	}
	return settings, platforms, nil
}

// CommitTime is the committer time of HEAD in repoRoot, the default modification time of every layer entry.
func CommitTime(ctx context.Context, repoRoot string) (time.Time, error) {
	git, err := toolchain.Find("git", "read the commit time that dates the image layers")
	if err != nil {
		return time.Time{}, err
	}
	out, err := toolchain.Output(ctx, repoRoot, nil, git, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the commit time (or set SOURCE_DATE_EPOCH): %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("git log printed %q for the commit time", out)
	}
	return time.Unix(n, 0).UTC(), nil
}
