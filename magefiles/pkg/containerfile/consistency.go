package containerfile

import (
	"fmt"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
)

// CheckBase compares the stage graph of an image's Containerfile with the base mage assembles it on, and returns
// every difference (none means they agree):
//   - spec.FromStage set: the final stage is FROM that stage, which is FROM runtimeBase (mage assembles on an
//     image of that stage, as it cannot run dnf);
//   - spec.From "image:<name>": the final stage is FROM the image Konflux pushes for component <name>, i.e. a
//     reference in the repository componentRepo(<name>) (tag and/or digest as the nudge writes them);
//   - any other spec.From: the final stage is FROM exactly that reference.
//
// Other stages may only be builders whose output the final stage copies.
func CheckBase(spec imagebuild.Spec, f File, runtimeBase string, componentRepo func(string) string) []string {
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, spec.Name+": "+fmt.Sprintf(format, args...))
	}
	final := f.Final()
	switch {
	case spec.FromStage != "":
		stage, ok := f.Stage(spec.FromStage)
		switch {
		case !ok:
			add("no stage %q, the stage mage's base (%s) stands for", spec.FromStage, spec.FromEnv)
		case final.BaseName != spec.FromStage:
			add("the final stage is FROM %s; mage assembles on an image of stage %q, so it must be FROM %s", final.BaseName, spec.FromStage, spec.FromStage)
		case stage.BaseName != runtimeBase:
			add("stage %q is FROM %s; its base must be %s (BASE_IMAGE)", spec.FromStage, stage.BaseName, runtimeBase)
		}
	case strings.HasPrefix(spec.From, "image:"):
		repo := componentRepo(strings.TrimPrefix(spec.From, "image:"))
		if repo == "" || !(strings.HasPrefix(final.BaseName, repo+":") || strings.HasPrefix(final.BaseName, repo+"@")) {
			add("the final stage is FROM %s; mage assembles on %s, which Konflux pushes to %s", final.BaseName, spec.From, repo)
		}
	default:
		if final.BaseName != spec.From {
			add("the final stage is FROM %s; mage assembles on %s", final.BaseName, spec.From)
		}
	}
	// Every earlier stage must feed the final image (COPY --from or RUN --mount from it) or be its base.
	used := map[string]bool{final.BaseName: true}
	for _, c := range Commands[*instructions.CopyCommand](final) {
		used[c.From] = true
	}
	for _, r := range Commands[*instructions.RunCommand](final) {
		for _, m := range instructions.GetMounts(r) {
			used[m.From] = true
		}
	}
	for _, s := range f.Stages[:len(f.Stages)-1] {
		if s.Name == "" || !used[s.Name] {
			add("stage %q (FROM %s) is not used by the final stage", s.Name, s.BaseName)
		}
	}
	return problems
}
