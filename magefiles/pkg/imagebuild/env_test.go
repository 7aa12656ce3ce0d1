package imagebuild

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseEnv(t *testing.T) {
	rows := []struct {
		name         string
		env          map[string]string
		wantRegistry string
		wantTag      string
		wantInsecure bool
		wantMTime    int64
		wantJobs     int
		wantFrom     map[string]string
		wantErr      string
	}{
		{name: "defaults", wantFrom: map[string]string{}},
		{name: "everything", env: map[string]string{"REGISTRY": "127.0.0.1:5000/openshift/", "IMAGE_TAG": "v1.2.3-rc.1", "REGISTRY_INSECURE": "true",
			"SOURCE_DATE_EPOCH": "1767225600", "IMAGE_JOBS": "3", "AWS_EFS_CSI_DRIVER_OPERATOR_FROM": " oci:/tmp/ubi9 "},
			wantRegistry: "127.0.0.1:5000/openshift", wantTag: "v1.2.3-rc.1", wantInsecure: true, wantMTime: 1767225600, wantJobs: 3,
			wantFrom: map[string]string{Operator: "oci:/tmp/ubi9"}},
		{name: "bad insecure", env: map[string]string{"REGISTRY_INSECURE": "yes please"}, wantErr: `REGISTRY_INSECURE "yes please": want true or false`},
		{name: "bad epoch", env: map[string]string{"SOURCE_DATE_EPOCH": "2026-01-01"}, wantErr: `SOURCE_DATE_EPOCH "2026-01-01": want seconds since 1970-01-01 UTC`},
		{name: "bad jobs", env: map[string]string{"IMAGE_JOBS": "0"}, wantErr: `IMAGE_JOBS "0": want a positive integer`},
		{name: "bad tag", env: map[string]string{"IMAGE_TAG": "v1:2"}, wantErr: `IMAGE_TAG "v1:2": want 1 to 128 of [A-Za-z0-9_.-]`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s, err := ParseEnv(func(k string) string { return row.env[k] }, DefaultSpecs(testVersions))
			if row.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), row.wantErr) {
					t.Fatalf("ParseEnv = %v, want an error containing %q", err, row.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var mtime int64
			if !s.MTime.IsZero() {
				mtime = s.MTime.Unix()
			}
			if s.Registry != row.wantRegistry || s.Tag != row.wantTag || s.Insecure != row.wantInsecure || mtime != row.wantMTime ||
				!maps.Equal(s.From, row.wantFrom) || (row.wantJobs != 0 && s.Jobs != row.wantJobs) {
				t.Fatalf("ParseEnv = %+v", s)
			}
			specs := s.WithBases(DefaultSpecs(testVersions))
			for i, spec := range DefaultSpecs(testVersions) {
				want := spec.From
				if v, ok := row.wantFrom[spec.Name]; ok {
					want = v
				}
				if specs[i].From != want {
					t.Errorf("%s: From = %q, want %q", spec.Name, specs[i].From, want)
				}
			}
		})
	}
}

// commitRepo makes a git repository in a temporary directory whose HEAD was committed at committed.
func commitRepo(t *testing.T, committed time.Time) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "dated"}} {
		cmd := exec.CommandContext(t.Context(), "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+committed.Format(time.RFC3339), "GIT_AUTHOR_DATE="+committed.Format(time.RFC3339))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestReadEnv(t *testing.T) {
	committed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	repo := commitRepo(t, committed)
	rows := []struct {
		name          string
		env           map[string]string
		wantMTime     time.Time
		wantPlatforms []string
		wantErr       string
	}{
		{name: "defaults: commit time, every platform", env: map[string]string{},
			wantMTime: committed, wantPlatforms: []string{"linux/amd64", "linux/arm64"}},
		{name: "SOURCE_DATE_EPOCH wins over the commit", env: map[string]string{"SOURCE_DATE_EPOCH": "1767225600", "PLATFORMS": "linux/arm64"},
			wantMTime: time.Unix(1767225600, 0).UTC(), wantPlatforms: []string{"linux/arm64"}},
		{name: "bad PLATFORMS", env: map[string]string{"PLATFORMS": "linux/mips"}, wantErr: "linux/mips"},
		{name: "bad settings", env: map[string]string{"IMAGE_JOBS": "0"}, wantErr: `IMAGE_JOBS "0"`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			settings, platforms, err := ReadEnv(t.Context(), repo, func(k string) string { return row.env[k] }, nil)
			if row.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), row.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, row.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !settings.MTime.Equal(row.wantMTime) {
				t.Errorf("MTime = %v, want %v", settings.MTime, row.wantMTime)
			}
			var got []string
			for _, p := range platforms {
				got = append(got, p.String())
			}
			if !slices.Equal(got, row.wantPlatforms) {
				t.Errorf("platforms = %v, want %v", got, row.wantPlatforms)
			}
		})
	}
}
