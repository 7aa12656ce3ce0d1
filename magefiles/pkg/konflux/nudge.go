package konflux

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/containerfile"
)

// Facts of Konflux build-service's nudges (konflux-ci/build-service@ccde63aa02e867419cafa0ee6bb3d972ca6ce42f):
//   - internal/controller/component_dependency_update_controller.go: the files a finished push build nudges are
//     the regular expressions of its PipelineRun's build.appstudio.openshift.io/build-nudge-files annotation
//     (comma-separated), by default DefaultNudgeFiles;
//   - internal/controller/renovate_util.go generateRenovateConfigForNudge: in those files Renovate rewrites only
//     the digest of an existing "<built repository>(:.*)?@sha256:<hex>" string (matchStrings, currentDigest).
const (
	// NudgeFilesAnnotation names the files a push build nudges.
	NudgeFilesAnnotation = "build.appstudio.openshift.io/build-nudge-files"
	// DefaultNudgeFiles applies when the annotation is absent.
	DefaultNudgeFiles = ".*Dockerfile.*, .*.yaml, .*Containerfile.*"
	// PlaceholderDigest stands, in nudge-able form, for a component's digest before its first push build; it
	// is never a real image. `go tool mage konflux` reports it as "first push digest not recorded".
	PlaceholderDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	// DriverContainerfile is the one file that names our aws-efs-utils-base component: the driver's FROM.
	DriverContainerfile = "images/aws-efs-csi-driver/Containerfile"
	// BaseComponent is the driver's base component.
	BaseComponent = "aws-efs-utils-base"
)

// NudgeTarget is build-service's match string for a component pushed to repo.
func NudgeTarget(repo string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(repo) + `(:.*)?@(sha256:[a-f0-9]+)`)
}

// Nudge rewrites content as a nudge pull request of repo's component does: every digest of a NudgeTarget match
// becomes digest; nothing else changes.
func Nudge(content, repo, digest string) string {
	return NudgeTarget(repo).ReplaceAllStringFunc(content, func(m string) string {
		at := strings.LastIndex(m, "@")
		return m[:at+1] + digest
	})
}

// NudgeFiles are the file patterns run nudges.
func NudgeFiles(r Run) []*regexp.Regexp {
	v := r.Metadata.Annotations[NudgeFilesAnnotation]
	if v == "" {
		v = DefaultNudgeFiles
	}
	var out []*regexp.Regexp
	for _, p := range strings.Split(v, ",") {
		if re, err := regexp.Compile(strings.TrimSpace(p)); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// PushRepo is the repository a component's push run writes ("" when there is none).
func PushRepo(runs []Run, component string) (Run, string) {
	for _, r := range runs {
		if r.Metadata.Labels["appstudio.openshift.io/component"] == component && strings.HasSuffix(r.File, "-push.yaml") {
			out := r.Param("output-image")
			if i := strings.LastIndex(out, ":"); i > strings.LastIndex(out, "/") {
				out = out[:i]
			}
			return r, out
		}
	}
	return Run{}, ""
}

// DriverBase is the driver image's base as Konflux builds it: the final FROM of DriverContainerfile, our
// aws-efs-utils-base by digest. It is the single place that reference is written; `go tool mage images` reads it
// here when AWS_EFS_CSI_DRIVER_FROM=containerfile.
func DriverBase(root string) (string, error) {
	f, err := containerfile.ParseFile(filepath.Join(root, DriverContainerfile))
	if err != nil {
		return "", err
	}
	ref := f.Final().BaseName
	if strings.HasSuffix(ref, "@"+PlaceholderDigest) {
		return "", fmt.Errorf("%s: FROM %s: first push digest not recorded (the all-zero placeholder); the first push build of %s nudges it (ci/README.md)", DriverContainerfile, ref, BaseComponent)
	}
	return ref, nil
}

// checkBaseNudge: the base component's push run nudges DriverContainerfile, whose final stage is FROM the base's
// repository pinned by digest in the form the nudge rewrites, and which holds no other reference to it.
func checkBaseNudge(root string, runs []Run) []string {
	run, repo := PushRepo(runs, BaseComponent)
	if repo == "" {
		return []string{"no push PipelineRun of " + BaseComponent}
	}
	var problems []string
	matched := false
	for _, re := range NudgeFiles(run) {
		matched = matched || re.MatchString(DriverContainerfile)
	}
	if !matched {
		problems = append(problems, fmt.Sprintf("%s: %s %q does not match %s, so its nudges never reach the driver", filepath.Base(run.File), NudgeFilesAnnotation, run.Metadata.Annotations[NudgeFilesAnnotation], DriverContainerfile))
	}
	data, err := os.ReadFile(filepath.Join(root, DriverContainerfile))
	if err != nil {
		return append(problems, err.Error())
	}
	f, err := containerfile.Parse(string(data))
	if err != nil {
		return append(problems, err.Error())
	}
	from := f.Final().BaseName
	if m := NudgeTarget(repo).FindString(from); m == "" || m != from || !digestRef.MatchString(from) {
		problems = append(problems, fmt.Sprintf("%s: final FROM %s: want %s[:tag]@sha256:<digest> written out (no ARG), the form the %s nudge rewrites", DriverContainerfile, from, repo, BaseComponent))
	}
	if n := len(NudgeTarget(repo).FindAllString(string(data), -1)); n != 1 {
		problems = append(problems, fmt.Sprintf("%s: %d references to %s by digest: want exactly one, the final FROM", DriverContainerfile, n, repo))
	}
	return problems
}
